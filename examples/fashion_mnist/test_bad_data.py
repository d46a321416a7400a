#!/usr/bin/env python3
"""Missing and corrupt Fashion-MNIST files: the trainer must exit nonzero with a message
that names the Debian package (data missing) or the file and what is wrong with it, and
must write nothing. A small valid data set made the same way trains (exit 0), so the
corrupt cases differ from a good one only by their defect.

usage: test_bad_data.py PATH_OF_fashion_mnist
"""
import gzip
import os
import random
import struct
import subprocess
import sys
import tempfile

TRAIN_N, TEST_N = 96, 32


def idx_images(count, rows=28, cols=28, magic=0x00000803, declared=None, rng=None):
    rng = rng or random.Random(count)
    head = struct.pack(">IIII", magic, count if declared is None else declared, rows, cols)
    return head + bytes(rng.randrange(256) for _ in range(count * rows * cols))


def idx_labels(count, magic=0x00000801, declared=None, bad_at=None):
    labels = bytearray(i % 10 for i in range(count))
    if bad_at is not None:
        labels[bad_at] = 12
    return struct.pack(">II", magic, count if declared is None else declared) + bytes(labels)


def good_files():
    return {
        "train-images-idx3-ubyte.gz": gzip.compress(idx_images(TRAIN_N)),
        "train-labels-idx1-ubyte.gz": gzip.compress(idx_labels(TRAIN_N)),
        "t10k-images-idx3-ubyte.gz": gzip.compress(idx_images(TEST_N)),
        "t10k-labels-idx1-ubyte.gz": gzip.compress(idx_labels(TEST_N)),
    }


def flip_deflate_byte(gz):
    b = bytearray(gz)
    b[len(b) // 2] ^= 0x55
    return bytes(b)


def cases():
    """(name, {file: bytes or None to delete}, expected exit status, substrings of stderr)."""
    ti, tl = "train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"
    si, sl = "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"
    good = good_files()
    return [
        ("valid small data set trains", {}, 0, []),
        ("missing directory", "NO_DIR", 1, ["dataset-fashion-mnist", "no such directory"]),
        ("empty directory", {f: None for f in good}, 1, ["dataset-fashion-mnist", ti, "no such file"]),
        ("missing test labels", {sl: None}, 1, ["dataset-fashion-mnist", sl]),
        ("truncated gzip", {ti: good[ti][: len(good[ti]) // 2]}, 1, [ti, "bad gzip data", "truncated"]),
        ("not gzip data", {tl: b"this is not gzip data at all"}, 1, [tl, "bad gzip data", "not a gzip file"]),
        ("empty file", {si: b""}, 1, [si, "bad gzip data", "empty"]),
        ("corrupt deflate stream", {ti: flip_deflate_byte(good[ti])}, 1, [ti, "bad gzip data"]),
        ("wrong image magic", {ti: gzip.compress(idx_images(TRAIN_N, magic=0x00000801))}, 1,
         [ti, "wrong idx magic 0x00000801"]),
        ("wrong label magic", {sl: gzip.compress(idx_labels(TEST_N, magic=0x00000803))}, 1,
         [sl, "wrong idx magic"]),
        ("label count differs from image count", {tl: gzip.compress(idx_labels(TRAIN_N - 1))}, 1,
         [tl, "wrong count", "95 labels"]),
        ("idx data shorter than its header says", {si: gzip.compress(idx_images(TEST_N, declared=TEST_N + 5))}, 1,
         [si, "truncated", "37 images"]),
        ("trailing idx data", {tl: gzip.compress(idx_labels(TRAIN_N, declared=TRAIN_N - 3))}, 1,
         [tl, "wrong count"]),
        ("wrong image size", {ti: gzip.compress(idx_images(TRAIN_N, rows=32, cols=32))}, 1,
         [ti, "wrong dimensions", "32x32"]),
        ("header cut short", {ti: gzip.compress(idx_images(TRAIN_N)[:10])}, 1, [ti, "truncated"]),
        ("label out of range", {sl: gzip.compress(idx_labels(TEST_N, bad_at=7))}, 1, [sl, "out of range"]),
    ]


def listing(root):
    out = {}
    for d, _, files in os.walk(root):
        for f in files:
            p = os.path.join(d, f)
            with open(p, "rb") as fh:
                out[os.path.relpath(p, root)] = fh.read()
    return out


def main():
    exe = os.path.abspath(sys.argv[1])
    passed = failed = 0
    for name, change, want_rc, want_msgs in cases():
        with tempfile.TemporaryDirectory(prefix="fmnist_bad_") as tmp:
            data = os.path.join(tmp, "data")
            if change != "NO_DIR":
                os.mkdir(data)
                for f, content in {**good_files(), **change}.items():
                    if content is not None:
                        with open(os.path.join(data, f), "wb") as fh:
                            fh.write(content)
            before = listing(tmp)
            r = subprocess.run([exe, "--data", data, "--device", "cpu", "--epochs", "1", "--batch", "32"],
                               cwd=tmp, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=240)
            problems = []
            if r.returncode != want_rc:
                problems.append(f"exit status {r.returncode}, expected {want_rc}")
            for m in want_msgs:
                if m not in r.stderr:
                    problems.append(f"stderr lacks {m!r}")
            if want_rc != 0 and "error:" not in r.stderr:
                problems.append("no 'error:' line on stderr")
            if listing(tmp) != before:
                problems.append("files were written or changed")
            if problems:
                failed += 1
                print(f"FAIL {name}: " + "; ".join(problems))
                print("  stdout: " + r.stdout.strip().replace("\n", "\n          "))
                print("  stderr: " + r.stderr.strip().replace("\n", "\n          "))
            else:
                passed += 1
                first = r.stderr.strip().splitlines()[0] if r.stderr.strip() else r.stdout.strip().splitlines()[-1]
                print(f"ok   {name}: {first}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
