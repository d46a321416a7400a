#!/usr/bin/env bash
# The test command (README): installs what is missing, then builds and tests odnn
#   1. CPU-only release build: the whole ctest suite;
#   2. AddressSanitizer + UndefinedBehaviorSanitizer build: the whole suite again;
#   3. where nvcc exists: a CUDA build (one architecture) - it must compile, and the
#      CPU-labelled suite runs against it (GPU tests need the GPU machine:
#      scripts/gpu-check.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
jobs=$(nproc)
step() { printf '\n==== %s\n' "$*"; }

step "CPU build"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DODNN_WITH_CUDA=OFF >/dev/null
ninja -C build -j "$jobs"
ctest --test-dir build -j "$jobs" --output-on-failure

step "ASan + UBSan build"
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DODNN_WITH_CUDA=OFF -DODNN_SANITIZE=ON >/dev/null
ninja -C build-asan -j "$jobs"
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-asan -j "$jobs" --output-on-failure

if command -v nvcc >/dev/null; then
  step "CUDA build (compile check, sm_90a, with the CUTLASS tensor-core kernels) + CPU-labelled tests"
  scripts/fetch-cutlass.sh
  cmake -S . -B build-cuda -G Ninja -DCMAKE_BUILD_TYPE=Release -DODNN_WITH_CUDA=ON -DODNN_CUDA_ARCHS=90a >/dev/null
  ninja -C build-cuda -j "$jobs"
  ctest --test-dir build-cuda -j "$jobs" -L cpu --output-on-failure
else
  step "nvcc not found: CUDA build skipped"
fi
step "all tests passed"
