#!/usr/bin/env bash
# The main job (README): installs what is missing, builds odnn and trains a small CNN on
# Fashion-MNIST through the cuDNN API with it (examples/fashion_mnist): on the GPU where
# odnn has one, on the CPU otherwise. Extra arguments go to the trainer (--help lists them).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
ninja -C build -j "$(nproc)" cudnn odnn_tool fashion_mnist
# What was built and which backend a handle gets.
build/bin/odnn info
echo
build/bin/fashion_mnist "$@"
