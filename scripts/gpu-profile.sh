#!/usr/bin/env bash
# Nsight Compute over odnn's kernels on the GPU machine, one `odnn bench` run per problem
# (after scripts/gpu-check.sh has built build-gpu). Usage:
#   scripts/gpu-profile.sh [--kernels REGEX] [--launches N] PROBLEM...
#   e.g. scripts/gpu-profile.sh 'pool fwd mode=max dt=f32 layout=nchw n=128 c=256 h=56 w=56 r=3 s=3 pad=1 stride=2'
# Appends the report (speed of light, occupancy, launch, warp state and memory sections
# of the first N matching launches) to $OUT/ncu.txt (or ./gpu-logs/ncu.txt).
set -uo pipefail
cd "$(dirname "$0")/.."
kernels='ew_flat|ew_strided|pool_|softmax|stats_|apply_|finalize|coef_|lrn|dropout|conv|gemm|im2col|cutlass'
launches=4
while [ $# -gt 0 ]; do
  case "$1" in
    --kernels) kernels="$2"; shift 2 ;;
    --launches) launches="$2"; shift 2 ;;
    *) break ;;
  esac
done
out="${OUT:-$PWD/gpu-logs}"
mkdir -p "$out"
ncu=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
[ -n "$ncu" ] || { echo "gpu-profile: no ncu on this machine"; exit 1; }
for prob in "$@"; do
  echo "=== $prob" >> "$out/ncu.txt"
  timeout 120 "$ncu" --clock-control none --section SpeedOfLight --section Occupancy --section LaunchStats \
    --section WarpStateStats --section MemoryWorkloadAnalysis -k "regex:$kernels" --launch-count "$launches" \
    build-gpu/bin/odnn bench "$prob" --reps 3 --warmup 1 --no-check >> "$out/ncu.txt" 2>&1
done
echo "gpu-profile: $# problems -> $out/ncu.txt"
