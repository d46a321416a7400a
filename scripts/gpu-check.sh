#!/usr/bin/env bash
# The GPU machine's recipe: build odnn with CUDA (Ninja, all cores), run the
# gpu-labelled tests and the CPU suite against the CUDA build, write logs to $OUT
# (or ./gpu-logs). Usage:
#   scripts/gpu-check.sh [--tests REGEX] [--no-cpu] [--bench "ARGS"]...
# The machine reaches no package registry: fetch the CUTLASS headers here first
# (scripts/fetch-cutlass.sh) and carry third_party/cutlass along.
# --bench runs `odnn bench ARGS --lib <NVIDIA's cuDNN> --lib <odnn>` (NVIDIA first: the
# ratios are odnn's speed relative to NVIDIA's), each under a header in $OUT/bench.txt,
# line-buffered so that a run cut off by its timeout keeps what it printed. At most 8
# files come back from the GPU machine's $OUT, so the logs are kept to five. Leading
# VAR=VALUE words of a --bench go to the environment of that run alone, e.g.
#   --bench "ODNN_CONV_WGRAD=split --batch bench/resnet50_conv.txt --dir bwd_filter".
# --gpu-jobs N runs the gpu tests N at a time (default 1). To spend a call on tests and
# benches alone, build here and carry the binaries instead: scripts/gpu-carry.sh.
set -uo pipefail
cd "$(dirname "$0")/.."
tests_regex=""
cpu_suite=1
benches=()
gpu_jobs=1
while [ $# -gt 0 ]; do
  case "$1" in
    --tests) tests_regex="$2"; shift 2 ;;
    --no-cpu) cpu_suite=0; shift ;;
    --gpu-jobs) gpu_jobs="$2"; shift 2 ;;
    --bench) benches+=("$2"); shift 2 ;;
    *) echo "gpu-check: unknown argument $1"; exit 2 ;;
  esac
done
out="${OUT:-$PWD/gpu-logs}"
mkdir -p "$out"
build=build-gpu
archs="${ODNN_CUDA_ARCHS:-90a}"
jobs=$(nproc)

{
  echo "== machine"; date -u; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1
  nvcc --version | tail -2; cmake --version | head -1
} > "$out/machine.txt" 2>&1

# NVIDIA's cuDNN on the GPU machine (test oracle only): PyTorch's wheel.
nv=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn
if [ -f "$nv/lib/libcudnn.so.9" ]; then
  export CUDNN_LIB_DIR="$nv/lib" CUDNN_INCLUDE_DIR="$nv/include"
fi

start=$(date +%s)
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DODNN_WITH_CUDA=ON \
      -DODNN_CUDA_ARCHS="$archs" > "$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
ninja -C "$build" -j "$jobs" >> "$out/build.log" 2>&1 || { grep -E 'error|FAILED' "$out/build.log" | head -40; exit 1; }
echo "build: $(( $(date +%s) - start )) s (archs $archs)" | tee -a "$out/machine.txt"

status=0
ctest --test-dir "$build" -L gpu -j "$gpu_jobs" --output-on-failure ${tests_regex:+-R "$tests_regex"} > "$out/ctest-gpu.log" 2>&1 || status=1
tail -15 "$out/ctest-gpu.log"
if [ "$cpu_suite" = 1 ]; then
  ctest --test-dir "$build" -L cpu -j "$jobs" --output-on-failure > "$out/ctest-cpu.log" 2>&1 || status=1
  tail -5 "$out/ctest-cpu.log"
fi

i=0
for b in "${benches[@]}"; do
  i=$((i + 1))
  libs=()
  [ -n "${CUDNN_LIB_DIR:-}" ] && libs+=(--lib "$CUDNN_LIB_DIR/libcudnn.so.9")
  libs+=(--lib "$PWD/$build/lib/libcudnn.so.9")
  envs=()
  read -r -a words <<< "$b"
  while [ ${#words[@]} -gt 0 ] && [[ "${words[0]}" =~ ^[A-Za-z_][A-Za-z0-9_]*= ]]; do
    envs+=("${words[0]}"); words=("${words[@]:1}")
  done
  echo "=== bench $i: ${envs[*]} odnn bench ${words[*]}" >> "$out/bench.txt"
  timeout 400 env "${envs[@]}" stdbuf -oL "$build/bin/odnn" bench "${words[@]}" "${libs[@]}" 2>&1 |
    tee -a "$out/bench.txt" | tail -4 || status=1
done
exit $status
