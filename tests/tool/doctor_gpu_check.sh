#!/usr/bin/env bash
# odnn doctor on the GPU machine (a driver, a GPU, NVIDIA's cuDNN in PyTorch's wheel):
# the paths a machine without a driver cannot show. Builds odnn CPU-only (fast) and,
# time allowing, with CUDA; runs doctor on every library there and the doctor test
# scenarios that need no libarchive. Logs go to $OUT (or ./doctor-gpu-logs).
# Usage: tests/tool/doctor_gpu_check.sh [cuda-build-seconds (default 300, 0: skip)]
set -uo pipefail
cd "$(dirname "$0")/../.."
out="${OUT:-$PWD/doctor-gpu-logs}"
mkdir -p "$out"
cuda_budget="${1:-300}"
jobs=$(nproc)
nv=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib/libcudnn.so.9
log="$out/doctor-gpu.txt"
: > "$log"
say() { echo "$@" | tee -a "$log"; }

say "== machine: $(date -u)"
nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv >> "$log" 2>&1

build_tool() {  # $1 build dir, $2 ODNN_WITH_CUDA
  cmake -S . -B "$1" -G Ninja -DCMAKE_BUILD_TYPE=Release -DODNN_WITH_CUDA="$2" -DODNN_CUDA_ARCHS=90a \
        -DODNN_BUILD_TESTS=OFF > "$out/configure-$2.log" 2>&1 &&
  ninja -C "$1" -j "$jobs" odnn_tool odnn_probe > "$out/build-$2.log" 2>&1
}

doctor_runs() {  # $1 build dir, $2 label
  local b="$1/bin/odnn" lib="$1/lib/libcudnn.so.9"
  for args in "" "--lib $nv" "--lib $lib"; do
    say ""
    say "## [$2] odnn doctor $args"
    timeout 300 "$b" doctor $args >> "$log" 2>&1
    say "exit: $?"
  done
  timeout 300 "$b" doctor --json --lib "$nv" > "$out/doctor-nvidia-$2.json" 2>&1
}

start=$(date +%s)
if build_tool build-doctor-cpu OFF; then
  say "cpu build: $(( $(date +%s) - start )) s"
  doctor_runs build-doctor-cpu cpu
  say ""
  say "## doctor test scenarios (CPU build of odnn)"
  api=build-doctor-cpu/tools/odnn/generated/api/api_names.txt
  for s in own_build nvidia_system nvidia_stray_sublibs default two_versions unresolved_dependency truncated \
           corrupt_header pe_dll bad_usage; do
    ODNN_BACKEND=cpu python3 tests/tool/doctor_test.py --odnn build-doctor-cpu/bin/odnn \
      --lib build-doctor-cpu/lib/libcudnn.so.9 --cc cc --api-names "$api" --work /tmp/doctor-work \
      --nvidia "$nv" "$s" 2>&1 | tail -3 | tee -a "$log"
  done
else
  say "cpu build failed"; grep -E 'error|FAILED' "$out/build-OFF.log" | head -20 | tee -a "$log"
fi

if [ "$cuda_budget" -gt 0 ]; then
  start=$(date +%s)
  if timeout "$cuda_budget" bash -c "$(declare -f build_tool); out='$out' jobs=$jobs build_tool build-doctor-cuda ON"; then
    say ""
    say "cuda build: $(( $(date +%s) - start )) s"
    doctor_runs build-doctor-cuda cuda
  else
    say "cuda build did not finish within ${cuda_budget} s"; tail -5 "$out/build-ON.log" >> "$log"
  fi
fi
