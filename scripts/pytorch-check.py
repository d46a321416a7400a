#!/usr/bin/env python3
"""PyTorch on odnn against PyTorch on NVIDIA's cuDNN, case by case (GPU machine).

Runs every case twice in child processes, each with PyTorch's legacy cuDNN path
(TORCH_CUDNN_V8_API_DISABLED=1, TORCH_CUDNN_SDPA_PREFERRED=0): once with the cuDNN that
PyTorch ships (NVIDIA's), once with odnn loaded through LD_PRELOAD. Each child saves
its results; the parent compares them within the data type's tolerance and prints one
line per case, the step-time ratio of the timed cases, and the calls odnn answered with
an error (from its CUDNN_LOGLEVEL_DBG log).

usage: scripts/pytorch-check.py --odnn build-gpu/lib/libcudnn.so.9 [--out DIR] [--only REGEX]
exit code: 0 when every case agrees and ran on both libraries, 1 otherwise.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

TOL = {"fp32": 1e-4, "tf32": 5e-3, "fp16": 2e-2, "bf16": 8e-2}


# ---------------------------------------------------------------------------
# Child side: the cases


def child(out_path, only):
    import time
    import torch
    import torch.nn.functional as F

    torch.backends.cudnn.enabled = True
    dev = torch.device("cuda")
    results = {}
    errors = {}
    timings = {}
    dtypes = {"fp32": torch.float32, "tf32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}

    def loaded_cudnn():
        with open("/proc/self/maps") as f:
            libs = sorted({line.split()[-1] for line in f if "libcudnn" in line and line.strip().endswith(".so.9")})
        return libs

    def case(name):
        def wrap(fn):
            if only and not re.search(only, name):
                return fn
            torch.manual_seed(1234)
            try:
                results[name] = [t.detach().float().cpu() for t in fn()]
            except Exception as e:  # a failing case is reported, the others still run
                errors[name] = "%s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else "")
            return fn
        return wrap

    def set_math(dt):
        torch.backends.cudnn.allow_tf32 = dt == "tf32"
        torch.backends.cuda.matmul.allow_tf32 = False

    def conv_case(dims, dt, layout, groups=1, dil=1, stride=1, pad=1, bias=True, bench=False, det=False):
        set_math(dt)
        torch.backends.cudnn.benchmark = bench
        torch.backends.cudnn.deterministic = det
        dtype = dtypes[dt]
        n, c, k = 4, 16, 32
        size = {1: (37,), 2: (19, 23), 3: (7, 9, 11)}[dims]
        x = torch.randn(n, c, *size, device=dev, dtype=dtype)
        w = torch.randn(k, c // groups, *([3] * dims), device=dev, dtype=dtype) * 0.2
        b = torch.randn(k, device=dev, dtype=dtype) if bias else None
        if layout == "cl" and dims == 2:
            x = x.contiguous(memory_format=torch.channels_last)
            w = w.contiguous(memory_format=torch.channels_last)
        if layout == "cl" and dims == 3:
            x = x.contiguous(memory_format=torch.channels_last_3d)
            w = w.contiguous(memory_format=torch.channels_last_3d)
        x.requires_grad_(True)
        w.requires_grad_(True)
        if b is not None:
            b.requires_grad_(True)
        conv = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[dims]
        y = conv(x, w, b, stride=stride, padding=pad, dilation=dil, groups=groups)
        g = torch.randn_like(y)
        y.backward(g)
        out = [y, x.grad, w.grad]
        if b is not None:
            out.append(b.grad)
        return out

    for dims in (1, 2, 3):
        for dt in ("fp32", "tf32", "fp16", "bf16"):
            for layout in (("nchw", "cl") if dims > 1 else ("nchw",)):
                case("conv%dd_%s_%s" % (dims, dt, layout))(lambda d=dims, t=dt, l=layout: conv_case(d, t, l))
    for dt in ("fp32", "fp16", "bf16"):
        case("conv2d_%s_groups4_dil2_stride2" % dt)(lambda t=dt: conv_case(2, t, "cl", groups=4, dil=2, stride=2, pad=2))
        case("conv2d_%s_nobias_pad0" % dt)(lambda t=dt: conv_case(2, t, "nchw", bias=False, pad=0))
        case("conv2d_%s_benchmark" % dt)(lambda t=dt: conv_case(2, t, "cl", bench=True))
        case("conv2d_%s_deterministic" % dt)(lambda t=dt: conv_case(2, t, "nchw", det=True))
    torch.backends.cudnn.benchmark = False
    torch.backends.cudnn.deterministic = False

    def bn_case(dt, training, layout):
        set_math(dt)
        dtype = dtypes[dt]
        x = torch.randn(8, 32, 13, 17, device=dev, dtype=dtype)
        if layout == "cl":
            x = x.contiguous(memory_format=torch.channels_last)
        x.requires_grad_(True)
        weight = torch.rand(32, device=dev, requires_grad=True)
        bias = torch.randn(32, device=dev, requires_grad=True)
        rm = torch.randn(32, device=dev)
        rv = torch.rand(32, device=dev) + 0.5
        y = F.batch_norm(x, rm, rv, weight, bias, training=training, momentum=0.1, eps=1e-5)
        out = [y, rm, rv]
        if training:
            y.backward(torch.randn_like(y))
            out += [x.grad, weight.grad, bias.grad]
        return out

    for dt in ("fp32", "fp16", "bf16"):
        for training in (True, False):
            for layout in ("nchw", "cl"):
                case("batchnorm_%s_%s_%s" % (dt, "train" if training else "eval", layout))(
                    lambda t=dt, tr=training, l=layout: bn_case(t, tr, l))

    def small_cnn(steps, dt):
        set_math(dt)
        torch.manual_seed(7)
        model = torch.nn.Sequential(
            torch.nn.Conv2d(3, 32, 3, padding=1), torch.nn.BatchNorm2d(32), torch.nn.ReLU(),
            torch.nn.MaxPool2d(2),
            torch.nn.Conv2d(32, 64, 3, padding=1), torch.nn.BatchNorm2d(64), torch.nn.ReLU(),
            torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(64, 10)).to(dev)
        opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        gen = torch.Generator(device="cpu").manual_seed(11)
        xs = torch.randn(16, 32, 3, 32, 32, generator=gen).to(dev)
        ys = torch.randint(0, 10, (16, 32), generator=gen).to(dev)
        losses = []
        for i in range(steps):
            opt.zero_grad()
            loss = F.cross_entropy(model(xs[i % 16]), ys[i % 16])
            loss.backward()
            opt.step()
            losses.append(loss.detach())
        return [torch.stack(losses)]

    case("small_cnn_200_sgd_steps_fp32")(lambda: small_cnn(200, "fp32"))

    def resnet18(dt):
        import torchvision
        set_math("fp32")
        torch.manual_seed(3)
        model = torchvision.models.resnet18(num_classes=100).to(dev)
        x = torch.randn(32, 3, 224, 224, device=dev)
        def step():
            model.zero_grad(set_to_none=True)
            with torch.autocast("cuda", dtype=torch.bfloat16, enabled=dt == "bf16"):
                out = model(x)
                loss = out.float().square().mean()
            loss.backward()
            return out, loss
        out, loss = step()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(5):
            step()
        torch.cuda.synchronize()
        timings["resnet18_" + dt] = (time.perf_counter() - t0) / 5
        return [out, loss, model.conv1.weight.grad, model.fc.weight.grad]

    for dt in ("fp32", "bf16"):
        case("resnet18_fwd_bwd_%s" % dt)(lambda t=dt: resnet18(t))

    torch.save({"results": results, "errors": errors, "timings": timings, "cudnn": loaded_cudnn(),
                "version": torch.backends.cudnn.version()}, out_path)


# ---------------------------------------------------------------------------
# Parent side


def run_child(tag, preload, out_dir, only):
    env = dict(os.environ)
    env["TORCH_CUDNN_V8_API_DISABLED"] = "1"
    env["TORCH_CUDNN_SDPA_PREFERRED"] = "0"
    log = os.path.join(out_dir, "cudnn-log-%s.txt" % tag)
    if preload:
        env["LD_PRELOAD"] = os.path.abspath(preload)
        env["CUDNN_LOGLEVEL_DBG"] = "1"  # errors: what odnn refused, and why
        env["CUDNN_LOGDEST_DBG"] = log
    path = os.path.join(out_dir, "results-%s.pt" % tag)
    cmd = [sys.executable, os.path.abspath(__file__), "--child", path] + (["--only", only] if only else [])
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        print("%s run failed (exit %d):\n%s" % (tag, proc.returncode, proc.stderr[-3000:]))
        return None, log
    import torch
    return torch.load(path), log


def tolerance(name):
    # Whole networks: reduction orders differ between libraries, and 18 layers (or 200
    # training steps) amplify those roundings; per-op cases get the data type's tolerance.
    if name.startswith(("resnet18", "small_cnn")):
        return 2e-2 if "fp32" in name else 1e-1
    for key, tol in TOL.items():
        if "_%s" % key in name:
            return tol
    return 2e-2


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--odnn", help="odnn's libcudnn.so.9")
    ap.add_argument("--out", default=None)
    ap.add_argument("--only", default=None, help="run the cases whose name matches")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        child(a.child, a.only)
        return 0
    if not a.odnn or not os.path.exists(a.odnn):
        print("pytorch-check: --odnn must name odnn's libcudnn.so.9")
        return 2
    out_dir = a.out or tempfile.mkdtemp(prefix="pytorch-check-")
    os.makedirs(out_dir, exist_ok=True)
    nv, _ = run_child("nvidia", None, out_dir, a.only)
    od, log = run_child("odnn", a.odnn, out_dir, a.only)
    if nv is None or od is None:
        return 1
    print("nvidia: cuDNN %s from %s" % (nv["version"], ", ".join(nv["cudnn"])))
    print("odnn:   cuDNN %s from %s" % (od["version"], ", ".join(od["cudnn"])))
    ok = all(os.path.abspath(a.odnn) in p or os.path.realpath(a.odnn) == os.path.realpath(p) for p in od["cudnn"][:1])
    if not ok:
        print("the odnn run did not map odnn's library first: %s" % od["cudnn"])
    names = sorted(set(nv["results"]) | set(nv["errors"]) | set(od["results"]) | set(od["errors"]))
    bad = 0
    import torch
    for name in names:
        if name in od["errors"] or name in nv["errors"]:
            bad += 1
            print("FAIL  %-40s nvidia: %s | odnn: %s" % (name, nv["errors"].get(name, "ok"), od["errors"].get(name, "ok")))
            continue
        tol = tolerance(name)
        worst = 0.0
        for x, y in zip(nv["results"][name], od["results"][name]):
            scale = max(x.abs().max().item(), 1e-6)
            worst = max(worst, (x - y).abs().max().item() / scale)
        verdict = "ok  " if worst <= tol else "FAIL"
        bad += worst > tol
        print("%s  %-40s max rel diff %.2e (tol %.0e)" % (verdict, name, worst, tol))
    for key in sorted(set(nv["timings"]) & set(od["timings"])):
        t_nv, t_od = nv["timings"][key], od["timings"][key]
        print("step time %-16s nvidia %.2f ms  odnn %.2f ms  odnn/nvidia %.2f" % (key, t_nv * 1e3, t_od * 1e3, t_od / t_nv))
    refused = {}
    if os.path.exists(log):
        for line in open(log, errors="replace"):
            m = re.search(r"(cudnn\w+)\(\): CUDNN_STATUS_NOT_SUPPORTED: (.*)", line)
            if m:
                count, why = refused.get(m.group(1), (0, m.group(2)))
                refused[m.group(1)] = (count + 1, why)
    print("odnn answered NOT_SUPPORTED %s" % ("to:" if refused else "to nothing"))
    for fn, (count, why) in sorted(refused.items()):
        print("  %-45s %4d calls, e.g. %s" % (fn, count, why[:160]))
    print("%d of %d cases disagree or failed" % (bad, len(names)))
    return 1 if bad or not ok else 0


if __name__ == "__main__":
    sys.exit(main())
