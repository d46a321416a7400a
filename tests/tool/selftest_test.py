#!/usr/bin/env python3
"""Tests of `odnn selftest`: it passes on odnn's CPU backend, fails exactly the cases a
deliberately broken library gets wrong, and refuses bad usage with a message.

    selftest_test.py --odnn BIN --broken LIB [--cuda-build] SCENARIO

Exit status: 0 pass, 1 fail, 77 skipped.
"""
import argparse
import json
import os
import re
import subprocess
import sys

A = None


class Skip(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise AssertionError(msg)


def run(args, expect=None, env=None):
    e = dict(os.environ)
    e.update(env or {})
    p = subprocess.run([A.odnn, "selftest"] + args, capture_output=True, text=True, env=e, timeout=900)
    check(p.returncode >= 0, f"selftest {' '.join(args)} died with signal {-p.returncode}\n{p.stderr}")
    if expect is not None:
        check(p.returncode == expect,
              f"selftest {' '.join(args)}: exit {p.returncode}, expected {expect}\n{p.stdout[-3000:]}\n{p.stderr}")
    return p


def run_json(args, expect=None):
    p = run(args + ["--json"], expect)
    try:
        d = json.loads(p.stdout)
    except json.JSONDecodeError as ex:
        raise AssertionError(f"--json printed no valid JSON ({ex}):\n{p.stdout[-2000:]}\n{p.stderr}")
    check(d["schema"] == "odnn-selftest/1", d.get("schema"))
    check(d["exit_code"] == p.returncode, f"exit_code {d['exit_code']} vs {p.returncode}")
    counts = {v: sum(1 for r in d["results"] if r["verdict"] == v) for v in ("pass", "FAIL", "skip")}
    check(counts["pass"] == d["passed"] and counts["FAIL"] == d["failed"] and counts["skip"] == d["skipped"],
          f"summary {d['passed']}/{d['failed']}/{d['skipped']} vs rows {counts}")
    check(p.returncode == (1 if d["failed"] else 0), "exit code does not follow the verdicts")
    return d


FAMILIES = ["conv fwd", "conv bwd_data", "conv bwd_filter", "conv bias", "conv bias_act fwd", "add", "optensor",
            "transform", "reduce", "set", "scale", "act fwd", "act bwd", "softmax fwd", "softmax bwd", "pool fwd",
            "pool bwd", "lrn fwd", "lrn bwd", "divnorm fwd", "divnorm bwd", "bn fwd_inf", "bn fwd_train", "bn bwd",
            "dropout fwd+bwd", "spatial_tf grid fwd", "spatial_tf sampler fwd", "spatial_tf grid bwd",
            "spatial_tf sampler bwd"]


def t_cpu_pass():
    d = run_json(["--backend", "cpu"], expect=0)
    check(d["backend"] == "cpu", d["backend"])
    check(d["failed"] == 0 and d["skipped"] == 0, [r for r in d["results"] if r["verdict"] != "pass"])
    ops = {r["op"] for r in d["results"]}
    for f in FAMILIES:
        check(f in ops, f"no case of {f}: {sorted(ops)}")
    check(d["passed"] >= 150, f"only {d['passed']} cases")
    # Convolutions: a second implementation is really compared (not the reference with itself).
    conv_impls = {r["implementation"] for r in d["results"] if r["op"].startswith("conv ")}
    check(any(not i.startswith("ref_") for i in conv_impls), f"conv implementations: {conv_impls}")
    # Both layouts and several data types are covered.
    probs = " ".join(r["problem"] for r in d["results"])
    for w in ("layout=nchw", "layout=nhwc", "layout=padded", "dt=f32", "dt=f16", "dt=bf16", "dt=f64"):
        check(w in probs, f"no problem with {w}")
    # The text form agrees.
    p = run(["--backend", "cpu"], expect=0)
    check(re.search(r"^\d+ passed, 0 failed, 0 skipped", p.stdout, re.M) and "verdict: pass" in p.stdout,
          p.stdout[-2000:])
    check(len([l for l in p.stdout.splitlines() if l.startswith("pass ")]) == d["passed"], "one line per case")


def broken_expected(r):
    """Whether the broken library must fail this case."""
    op, prob = r["op"], r["problem"]
    if op in ("act fwd", "set"):
        return True
    if op == "conv fwd" and prob.endswith(" algo=0"):
        return True
    # the backward of sigmoid and tanh reads the (corrupted) forward output y
    if op == "act bwd" and re.search(r"mode=(sigmoid|tanh) ", prob):
        return True
    return False


def t_broken_lib():
    d = run_json(["--backend", "cpu", "--lib", A.broken], expect=1)
    check(d["library"] == A.broken, d["library"])
    wrong = []
    for r in d["results"]:
        want_fail = broken_expected(r)
        if (r["verdict"] == "FAIL") != want_fail:
            wrong.append(r)
    check(not wrong, "verdicts not as the breakage predicts:\n" + "\n".join(json.dumps(r) for r in wrong))
    fails = [r for r in d["results"] if r["verdict"] == "FAIL"]
    check(any(r["op"] == "conv fwd" for r in fails), "the broken convolution was not caught")
    for r in fails:
        if r["op"] == "set":  # an element never written keeps the NaN poison
            check("nan" in r["detail"] and "outside the tolerance" in r["detail"], r)
        else:
            check("outside the tolerance" in r["detail"], r)
    p = run(["--backend", "cpu", "--lib", A.broken], expect=1)
    check("verdict: FAIL" in p.stdout, p.stdout[-1500:])
    check(re.search(r"^FAIL +act fwd", p.stdout, re.M), "act fwd rows say FAIL")


def t_op_filter():
    d = run_json(["--backend", "cpu", "--op", "act,soft"], expect=0)
    ops = {r["op"] for r in d["results"]}
    check(ops == {"act fwd", "act bwd", "softmax fwd", "softmax bwd"}, ops)
    d = run_json(["--backend", "cpu", "--lib", A.broken, "--op", "softmax"], expect=0)
    check(d["failed"] == 0 and d["passed"] > 0, "the broken library's softmax is odnn's own")


def t_bad_usage():
    for args in (["--frobnicate"], ["--backend", "tpu"], ["--backend"], ["--op", "nosuch"], ["--op", ","],
                 ["--lib"], ["extra"]):
        p = run(args, expect=2)
        check(p.stderr.strip() and "odnn selftest" in p.stderr, f"{args}: no message: {p.stderr}")
        check(not p.stdout.strip(), f"{args}: printed results: {p.stdout[:500]}")
    p = run(["--lib", "/nonexistent/libcudnn.so.9"], expect=1)
    check("cannot load" in p.stderr, p.stderr)
    p = run(["--ref", "/nonexistent/libodnn-selftest-ref.so"], expect=1)
    check("reference module" in p.stderr, p.stderr)
    p = run(["--ref", A.broken], expect=1)  # a cuDNN library, but not the reference module
    check("not odnn's selftest reference module" in p.stderr, p.stderr)
    p = run(["--help"], expect=0)
    check("usage: odnn selftest" in p.stdout, p.stdout)
    if not A.cuda_build:
        p = run(["--backend", "cuda"], expect=1)
        check("cudnnCreate failed" in p.stderr and "without CUDA" in p.stderr, p.stderr)


def t_cuda():
    # The GPU machine: every implemented operation on the CUDA backend against the CPU reference.
    if not A.cuda_build:
        raise Skip("built without CUDA")
    p = run(["--backend", "cuda", "--json"])
    if p.returncode == 1 and "cudnnCreate failed" in p.stderr:
        raise Skip("no usable GPU: " + p.stderr.strip())
    d = json.loads(p.stdout)
    check(d["backend"] == "cuda", d["backend"])
    bad = [r for r in d["results"] if r["verdict"] == "FAIL"]
    check(not bad, "failing on the CUDA backend:\n" + "\n".join(json.dumps(r) for r in bad))
    check(p.returncode == 0 and d["passed"] > 100, f"exit {p.returncode}, {d['passed']} passed")


SCENARIOS = {n[2:]: f for n, f in globals().items() if n.startswith("t_")}


def main():
    global A
    ap = argparse.ArgumentParser()
    ap.add_argument("--odnn", required=True)
    ap.add_argument("--broken", required=True)
    ap.add_argument("--cuda-build", action="store_true")
    ap.add_argument("scenario", choices=sorted(SCENARIOS))
    A = ap.parse_args()
    A.broken = os.path.abspath(A.broken)
    try:
        SCENARIOS[A.scenario]()
    except Skip as s:
        print(f"skipped: {s}")
        return 77
    except AssertionError as e:
        print(f"FAIL {A.scenario}: {e}")
        return 1
    print(f"pass {A.scenario}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
