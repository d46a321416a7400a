#!/usr/bin/env bash
# The test command (README): installs what is missing, then builds and tests odnn
#   1. AddressSanitizer + UndefinedBehaviorSanitizer build (CPU only): the whole suite,
#      each test program's cases in four shards rather than one process per case (process
#      start-up under the sanitizers cost more than the cases) - this is also the CPU-only
#      configuration's compile check;
#   2. a release build and the whole CPU-labelled suite again (in shards too: ~2900
#      processes cost minutes of CI): with CUDA (one architecture, the CUTLASS
#      tensor-core kernels included) where nvcc exists - it must compile, and with no
#      GPU present its handles run on the CPU backend - else CPU-only. GPU tests need
#      the GPU machine: scripts/gpu-check.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
jobs=$(nproc)
step() { printf '\n==== %s (%s)\n' "$*" "$(date -u +%H:%M:%S)"; }

step "ASan + UBSan build"
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DODNN_WITH_CUDA=OFF -DODNN_SANITIZE=ON \
      -DODNN_TEST_PER_CASE=OFF >/dev/null
ninja -C build-asan -j "$jobs"
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-asan -j "$jobs" --output-on-failure

if command -v nvcc >/dev/null; then
  step "Release build with CUDA (compile check, sm_90a, with the CUTLASS tensor-core kernels) + CPU-labelled tests"
  scripts/fetch-cutlass.sh
  cmake -S . -B build-cuda -G Ninja -DCMAKE_BUILD_TYPE=Release -DODNN_WITH_CUDA=ON -DODNN_CUDA_ARCHS=90a \
        -DODNN_TEST_PER_CASE=OFF >/dev/null
  ninja -C build-cuda -j "$jobs"
  ctest --test-dir build-cuda -j "$jobs" -L cpu --output-on-failure
else
  step "Release build (nvcc not found: CPU only)"
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DODNN_WITH_CUDA=OFF -DODNN_TEST_PER_CASE=OFF >/dev/null
  ninja -C build -j "$jobs"
  ctest --test-dir build -j "$jobs" --output-on-failure
fi
step "all tests passed"
