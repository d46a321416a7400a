#!/usr/bin/env python3
"""What the GPU will run, without a GPU: compiles one CUDA source of the library to a cubin
with the flags of a configured CUDA build, then prints, per kernel, the registers, stack
and spills (ptxas) and the SASS instruction count with its most frequent opcodes
(cuobjdump). Register counts decide occupancy and instruction counts decide whether an
element-wise or pooling kernel can be memory-bound at all, so compare them before and
after a change, then measure on the GPU machine. A cubin is the device pass alone: code
the host pass also compiles (a struct's default member initializers, for one) can fail
only in the real build, so build the object (ninja ... <file>.cu.o) before committing.

    scripts/sass.py src/cuda/pooling.cu [--kernels 'pool_bwd'] [--build build-cuda]
                    [--arch sm_90a] [--dump DIR]

Needs a build directory configured with CUDA (compile_commands.json is written by every
configure). cuobjdump and nvdisasm come from PATH or, when missing (the toolkit on the
development machine lacks them), from the pinned `nvidia-cuda-cuobjdump` and
`nvidia-cuda-nvdisasm` wheels on PyPI, fetched once into third_party/cuobjdump (ignored by
git). --dump writes each matching kernel's SASS to
DIR/<kernel>.sass.
"""
import argparse
import collections
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# cuobjdump runs nvdisasm: both pinned, each with its SHA-256.
WHEELS = {
    "cuobjdump": ("nvidia-cuda-cuobjdump==13.5.37", "38780fee50863252a0b8926357faa91615ca1c8346490563f33a06100cd73f58"),
    "nvdisasm": ("nvidia-cuda-nvdisasm==13.5.37", "d3fdbdd49fa53e2e4aacd3db8259d052bd2b049ececdcb69e92e083c6728e7ca"),
}
TOOLS = os.path.join(ROOT, "third_party", "cuobjdump")


def fetch(tool):
    exe = os.path.join(TOOLS, tool)
    if os.path.exists(exe):
        return exe
    wheel, sha256 = WHEELS[tool]
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--dest", tmp, wheel],
                       check=True)
        whl = next(os.path.join(tmp, f) for f in os.listdir(tmp) if f.endswith(".whl"))
        with open(whl, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
        if digest != sha256:
            sys.exit(f"sass: {os.path.basename(whl)} has SHA-256 {digest}, expected {sha256}")
        with zipfile.ZipFile(whl) as z:
            member = next(n for n in z.namelist() if n.endswith("/bin/" + tool))
            os.makedirs(TOOLS, exist_ok=True)
            with z.open(member) as src, open(exe, "wb") as dst:
                shutil.copyfileobj(src, dst)
    os.chmod(exe, 0o755)
    return exe


def cuobjdump():
    """cuobjdump and the environment it runs in (NVDISASM_PATH when fetched)."""
    found = shutil.which("cuobjdump")
    if found and shutil.which("nvdisasm"):
        return found, os.environ
    env = dict(os.environ, NVDISASM_PATH=os.path.dirname(fetch("nvdisasm")))
    return fetch("cuobjdump"), env


def compile_command(build, source):
    path = os.path.join(build, "compile_commands.json")
    if not os.path.exists(path):
        sys.exit(f"sass: no {path}; configure a CUDA build first (cmake -B {build} -DODNN_WITH_CUDA=ON ...)")
    want = os.path.realpath(source)
    for entry in json.load(open(path)):
        if os.path.realpath(os.path.join(entry["directory"], entry["file"])) == want:
            return entry["directory"], shlex.split(entry["command"])
    sys.exit(f"sass: {source} is not compiled by {build}")


def cubin_command(args, arch, out):
    cmd, skip = [], False
    for a in args:
        if skip:
            skip = False
        elif a == "-o":
            skip = True
        elif a == "-c" or a.startswith("--generate-code") or a.startswith("-gencode"):
            continue
        else:
            cmd.append(a)
    return cmd + ["-cubin", f"-arch={arch}", "-Xptxas", "-v", "-o", out]


def demangle(names):
    if not names or not shutil.which("c++filt"):
        return {n: n for n in names}
    out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True).stdout.split("\n")
    return dict(zip(names, out))


def short(name):
    """The demangled name without namespaces and without its parameter list."""
    name = re.sub(r"\(anonymous namespace\)::|odnn::|cuda::|core::", "", name)
    if name.endswith(")"):
        depth = 0
        for i in range(len(name) - 1, -1, -1):
            depth += {")": 1, "(": -1}.get(name[i], 0)
            if depth == 0:
                return name[:i]
    return name


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("source")
    ap.add_argument("--kernels", default="", help="regular expression on the demangled kernel name")
    ap.add_argument("--build", default=os.path.join(ROOT, "build-cuda"))
    ap.add_argument("--arch", default="sm_90a")
    ap.add_argument("--dump", help="write the SASS of each matching kernel into this folder")
    opt = ap.parse_args()

    tool, env = cuobjdump()
    directory, args = compile_command(opt.build, opt.source)
    with tempfile.TemporaryDirectory() as tmp:
        cubin = os.path.join(tmp, "k.cubin")
        done = subprocess.run(cubin_command(args, opt.arch, cubin), cwd=directory, capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(done.stderr)
        dumped = subprocess.run([tool, "-sass", cubin], capture_output=True, text=True, env=env)
        if dumped.returncode != 0:
            sys.exit(dumped.stderr)
        sass = dumped.stdout

    regs, cur = {}, None
    for line in done.stderr.splitlines():
        m = re.search(r"Compiling entry function '([^']+)'", line)
        if m:
            cur = m.group(1)
            regs[cur] = {"regs": 0, "stack": 0, "spill": 0}
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m and cur:
            regs[cur]["stack"] = int(m.group(1))
            regs[cur]["spill"] = int(m.group(2)) + int(m.group(3))
        m = re.search(r"Used (\d+) registers", line)
        if m and cur:
            regs[cur]["regs"] = int(m.group(1))

    ops = {}
    for chunk in re.split(r"\n\s*Function : ", sass)[1:]:
        name = chunk.split("\n", 1)[0].strip()
        body = re.findall(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z0-9_]+)[^;]*;", chunk)
        ops[name] = (len(body), collections.Counter(body), chunk)

    names = demangle(sorted(set(regs) | set(ops)))
    rx = re.compile(opt.kernels) if opt.kernels else None
    rows = [n for n in names if not rx or rx.search(names[n])]
    if opt.dump:
        os.makedirs(opt.dump, exist_ok=True)
    print(f"{'regs':>4} {'stack':>5} {'spill':>5} {'instr':>6}  top opcodes  kernel")
    for n in sorted(rows, key=lambda k: short(names[k])):
        r = regs.get(n, {"regs": 0, "stack": 0, "spill": 0})
        count, hist, chunk = ops.get(n, (0, collections.Counter(), ""))
        top = " ".join(f"{op}:{c}" for op, c in hist.most_common(5))
        print(f"{r['regs']:>4} {r['stack']:>5} {r['spill']:>5} {count:>6}  {top}  {short(names[n])}")
        if opt.dump and chunk:
            fname = re.sub(r"[^A-Za-z0-9_.-]+", "_", short(names[n]))[:150] + ".sass"
            with open(os.path.join(opt.dump, fname), "w") as f:
                f.write(chunk)


if __name__ == "__main__":
    main()
