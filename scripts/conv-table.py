#!/usr/bin/env python3
"""Turns the log of an `odnn bench --lib <NVIDIA> --lib <odnn>` convolution run into the
markdown table docs/PERFORMANCE.md keeps: one row per layer and direction, with its two
ceilings (FLOPs over the dense tensor rate, x + w + y bytes once over the copy bandwidth
the run measured), the first data type's times and the speed ratio of every data type.

    scripts/conv-table.py LOG [--tflops 989]

LOG: one bench run's output, such as scripts/gpu-check.sh's bench.txt after a single --bench
(it appends every --bench to that file)."""
import argparse
import collections
import math
import re

LINE = re.compile(r"^conv (\S+) dt=(\S+) layout=\S+ (?:math=\S+ )?n=(\d+) c=(\d+) h=(\d+) w=(\d+) k=(\d+) "
                  r"r=(\d+) s=(\d+) pad=(\d+) stride=(\d+) dil=(\d+) g=(\d+)\s+(\S+)\s+([\d.]+)\s")


def out_size(size, r, pad, stride, dil):
    return (size + 2 * pad - dil * (r - 1) - 1) // stride + 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("log")
    ap.add_argument("--tflops", type=float, default=989.0, help="dense tensor rate (H200 fp16/bf16)")
    a = ap.parse_args()
    gbs = None
    times = collections.OrderedDict()  # (layer, dir) -> {dt: {lib: ms}}
    dts, libs = [], []
    shapes = {}
    for line in open(a.log):
        m = re.search(r"copy bandwidth (\d+) GB/s", line)
        if m:
            gbs = float(m.group(1))
        m = LINE.match(line)
        if not m:
            continue
        d, dt, n, c, h, w, k, r, s, pad, stride, dil, g, lib, ms = m.groups()
        n, c, h, w, k, r, s, pad, stride, dil = map(int, (n, c, h, w, k, r, s, pad, stride, dil))
        layer = f"{c}×{h}×{w}→{k} {r}x{s} s{stride}"
        shapes[layer] = (n, c, h, w, k, r, s, pad, stride, dil)
        times.setdefault((layer, d), {}).setdefault(dt, {})[lib] = float(ms)
        if dt not in dts:
            dts.append(dt)
        if lib not in libs:
            libs.append(lib)
    if gbs is None or len(libs) != 2:
        raise SystemExit("expected a log with the measured copy bandwidth and two libraries")
    base, ours = libs
    first = dts[0]
    n0 = next(iter(shapes.values()))[0]
    print(f"| layer (N={n0}) | dir | GFLOP | FLOP ceiling µs | byte ceiling µs | NVIDIA {first} ms | "
          f"odnn {first} ms | odnn {first} TFLOP/s | " + " | ".join(f"{dt} odnn/NVIDIA speed" for dt in dts) + " |")
    print("|---" * (8 + len(dts)) + "|")
    logs = collections.defaultdict(list)
    for (layer, d), by_dt in times.items():
        n, c, h, w, k, r, s, pad, stride, dil = shapes[layer]
        p, q = out_size(h, r, pad, stride, dil), out_size(w, s, pad, stride, dil)
        flop = 2.0 * n * p * q * k * c * r * s
        nbytes = 2.0 * (n * c * h * w + k * c * r * s + n * k * p * q)
        t = by_dt.get(first, {})
        speeds = []
        for dt in dts:
            v = by_dt.get(dt, {})
            if base in v and ours in v:
                ratio = v[base] / v[ours]
                logs[(d, dt)].append(math.log(ratio))
                logs["all"].append(math.log(ratio))
                speeds.append(f"{ratio:.2f}")
            else:
                speeds.append("-")
        print(f"| {layer} | {d} | {flop / 1e9:.1f} | {flop / (a.tflops * 1e6):.0f} | {nbytes / (gbs * 1e3):.0f} | "
              f"{t.get(base, float('nan')):.3f} | {t.get(ours, float('nan')):.3f} | "
              f"{flop / (t.get(ours, float('nan')) * 1e9):.0f} | " + " | ".join(speeds) + " |")
    print()
    for key, v in logs.items():
        name = "all" if key == "all" else f"{key[0]} {key[1]}"
        print(f"geometric mean {name}: {math.exp(sum(v) / len(v)):.2f} over {len(v)}")
    print(f"copy bandwidth {gbs:.0f} GB/s")


if __name__ == "__main__":
    main()
