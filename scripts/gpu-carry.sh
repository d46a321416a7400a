#!/usr/bin/env bash
# Build here, run on the GPU machine without building there. The CUDA build tree
# (build-cuda: configured with -DODNN_WITH_CUDA=ON -DODNN_CUDA_ARCHS=90a and NVIDIA's
# headers, see scripts/gpu-check.sh) makes the library, `odnn` and the named GPU test
# binaries; `pack` copies them into build-carry/ (ignored by git), which the device call
# carries. Its minutes then go to tests and benches, not to a 100-160 s build there.
#
#   scripts/gpu-carry.sh pack [GPU_TEST_TARGET...]   (default: gpu_test_ops_norm_gpu)
#
# and, in the device call (carrying build-carry):
#
#   source build-carry/env.sh
#   ODNN_BACKEND=cuda build-carry/gpu_test_ops_norm_gpu --gtest_filter='*Bn*'
#   build-carry/odnn bench --batch bench/bn_nchw_sizes.txt --layout nchw --dt f32,bf16 \
#       --lib "$NV_CUDNN" --lib "$ODNN_CUDNN"
#
# env.sh puts the carried library first on LD_LIBRARY_PATH and names NVIDIA's cuDNN there
# (NV_CUDNN, the test oracle) and ours (ODNN_CUDNN). `odnn` links libarchive (for `doctor
# --archive`); where the GPU machine lacks it, an empty stand-in with its soname lets odnn
# load, and bench never calls into it. The test binaries read their case files from the
# source path compiled into them, so pack from the checkout the device call copies. What
# a call carries is capped at 64 MiB; the library is about 30.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" != pack ]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
  exit 2
fi
shift
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(gpu_test_ops_norm_gpu)
build="${ODNN_CARRY_BUILD:-build-cuda}"
[ -f "$build/build.ninja" ] || { echo "gpu-carry: no CUDA build tree at $build (ODNN_CARRY_BUILD)"; exit 1; }
ninja -C "$build" cudnn odnn "${targets[@]}"

rm -rf build-carry
mkdir -p build-carry/stub
cp -L "$build/lib/libcudnn.so.9" build-carry/
cp "$build/bin/odnn" build-carry/
for t in "${targets[@]}"; do
  f=$(find "$build/tests" -type f -name "$t" -perm -u+x | head -n 1)
  [ -n "$f" ] || { echo "gpu-carry: no test binary $t under $build/tests"; exit 1; }
  cp "$f" build-carry/
done
echo 'void odnn_carry_stand_in(void) {}' |
  "${CC:-cc}" -shared -fPIC -Wl,-soname,libarchive.so.13 -x c - -o build-carry/stub/libarchive.so.13

cat > build-carry/env.sh <<'EOF'
# Sourced on the GPU machine: the carried library first, NVIDIA's cuDNN named.
carry_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export LD_LIBRARY_PATH="$carry_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
ldconfig -p 2>/dev/null | grep -q 'libarchive\.so\.13 ' || export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$carry_dir/stub"
export NV_CUDNN=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib/libcudnn.so.9
export ODNN_CUDNN="$carry_dir/libcudnn.so.9"
EOF
size=$(du -sm build-carry | cut -f1)
echo "gpu-carry: build-carry/ holds ${size} MiB: $(ls build-carry | tr '\n' ' ')"
[ "$size" -le 64 ] || { echo "gpu-carry: over the 64 MiB a device call carries"; exit 1; }
