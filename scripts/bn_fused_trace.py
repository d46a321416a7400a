#!/usr/bin/env python3
"""Summarise a fused batch-norm trace (ODNN_BN_FUSED_TRACE=path, src/cuda/batchnorm.cu).

Each line of the trace is a block and a step with the stamps of TraceSlot: clock64
cycles within a block, globaltimer ns across blocks. Prints, in microseconds, each
phase of a step (median, 90th percentile, mean over the blocks and the steady steps),
the steps' lengths one by one, and how far apart the blocks run.

The stamps are compiled only in a build configured with -DODNN_BN_TRACE=ON:

    cmake -B build-trace -DODNN_WITH_CUDA=ON -DODNN_BN_TRACE=ON ... && ninja -C build-trace cudnn odnn
    ODNN_BN_FUSED_TRACE=/tmp/t.txt build-trace/bin/odnn bench "bn fwd_train ..." --reps 1 --warmup 1
    python3 scripts/bn_fused_trace.py /tmp/t.txt
"""
import statistics
import sys

START_NS, START, SUMS, PRE_BAR, POST_BAR, APPLIED, APPLIED_NS, LAST_SUMS, CTL_START, CTL_COEF, CTL_PUB, SM, ENTRY_NS = range(13)


def load(path):
    with open(path) as f:
        head = f.readline().split()
        meta = dict(kv.split("=") for kv in head[2:])
        rows = {}
        for line in f:
            v = [int(t) for t in line.split()]
            rows[(v[0], v[1])] = v[2:]
    return {k: int(x) for k, x in meta.items()}, rows


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    meta, rows = load(sys.argv[1])
    grid, steps, lag = meta["grid"], meta["steps"], meta["lag"]
    # Cycles a ns, from each block's first step start to its last apply.
    rates = []
    for b in range(grid):
        first, last = rows[(b, 0)], rows[(b, steps - 1)]
        if last[APPLIED_NS] > first[START_NS] and last[APPLIED] > first[START]:
            rates.append((last[APPLIED] - first[START]) / (last[APPLIED_NS] - first[START_NS]))
    ghz = statistics.median(rates)
    us = lambda cycles: cycles / ghz / 1000.0
    t0 = min(rows[(b, 0)][START_NS] for b in range(grid))
    t1 = max(rows[(b, steps - 1)][APPLIED_NS] for b in range(grid))
    e0 = min(rows[(b, 0)][ENTRY_NS] for b in range(grid))
    e1 = max(rows[(b, 0)][ENTRY_NS] for b in range(grid))
    print(f"grid {grid}, steps {steps}, Q {meta['Q']}, C {meta['C']}, lag {lag}; "
          f"SM clock {ghz:.3f} GHz; first start to last apply {(t1 - t0) / 1000:.1f} us")
    print(f"blocks entered over {(e1 - e0) / 1000:.2f} us; first entry to first step start {(t0 - e0) / 1000:.2f} us; "
          f"first entry to last apply {(t1 - e0) / 1000:.1f} us")
    ends = sorted(max(rows[(b, i)][APPLIED_NS] for i in range(steps)) for b in range(grid))
    print(f"blocks' last applies: first {(ends[0] - e0) / 1000:.1f} us, median {(ends[len(ends) // 2] - e0) / 1000:.1f}, "
          f"last {(ends[-1] - e0) / 1000:.1f}")

    steady = range(lag + 1, steps - lag - 1)
    if len(steady) == 0:  # a launch of few steps: all but the last (which has no next start)
        steady = range(0, steps - 1)
    if len(steady) == 0:
        sys.exit(f"{sys.argv[1]}: one step only, no step length to measure")
    phases = {
        "step (start to next start)": lambda b, i: rows[(b, i + 1)][START] - rows[(b, i)][START],
        "statistics loads and sums (warp 0)": lambda b, i: rows[(b, i)][SUMS] - rows[(b, i)][START],
        "last worker warp's sums after warp 0's": lambda b, i: rows[(b, i)][LAST_SUMS] - rows[(b, i)][SUMS],
        "apply loads issued": lambda b, i: rows[(b, i)][PRE_BAR] - rows[(b, i)][SUMS],
        "barrier wait (warp 0)": lambda b, i: rows[(b, i)][POST_BAR] - rows[(b, i)][PRE_BAR],
        "apply (past the barrier to stores issued)": lambda b, i: rows[(b, i)][APPLIED] - rows[(b, i)][POST_BAR],
        "apply end to next step start": lambda b, i: rows[(b, i + 1)][START] - rows[(b, i)][APPLIED],
        "control: step start after warp 0's": lambda b, i: rows[(b, i)][CTL_START] - rows[(b, i)][START],
        "control: polls and finish": lambda b, i: rows[(b, i)][CTL_COEF] - rows[(b, i)][CTL_START],
        "control: coefficients in, after warp 0 at the barrier": lambda b, i: rows[(b, i)][CTL_COEF] - rows[(b, i)][PRE_BAR],
        "control: publish after the barrier": lambda b, i: rows[(b, i)][CTL_PUB] - rows[(b, i)][POST_BAR],
    }
    print(f"\nsteady steps {steady.start}..{steady.stop - 1}, over blocks (us): median / p90 / mean")
    applied = {(b, i) for b in range(grid) for i in steady if rows[(b, i)][APPLIED]}
    for name, f in phases.items():
        # A step without an apply (the first lag steps) has no apply stamps: left out where used.
        keep = applied if "apply" in name else {(b, i) for b in range(grid) for i in steady}
        xs = [us(f(b, i)) for b, i in keep]
        if xs:
            print(f"  {name:58s} {statistics.median(xs):7.2f} {pct(xs, 0.9):7.2f} {statistics.mean(xs):7.2f}")
        else:
            print(f"  {name:58s}       -  (no step applies)")

    print("\nby step (us): mean step length over blocks; spread of the step's start across blocks (max - min, ns clock)")
    for i in range(steps):
        starts = [rows[(b, i)][START_NS] for b in range(grid)]
        ln = [us(rows[(b, i + 1)][START] - rows[(b, i)][START]) for b in range(grid)] if i + 1 < steps else \
             [us(rows[(b, i)][APPLIED] - rows[(b, i)][START]) for b in range(grid) if rows[(b, i)][APPLIED]]
        mean_ln = statistics.mean(ln) if ln else 0.0
        print(f"  step {i:3d}: {mean_ln:6.2f}   start at {(min(starts) - t0) / 1000:7.2f}, "
              f"spread {(max(starts) - min(starts)) / 1000:6.2f}")


if __name__ == "__main__":
    main()
