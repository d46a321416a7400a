#!/usr/bin/env bash
# Installs what building and testing odnn needs, where it is missing (Debian/Ubuntu).
set -euo pipefail
need=()
command -v cmake >/dev/null || need+=(cmake)
command -v ninja >/dev/null || need+=(ninja-build)
command -v g++ >/dev/null || need+=(g++)
command -v python3 >/dev/null || need+=(python3)
# pip fetches the pinned CUTLASS headers (scripts/fetch-cutlass.sh) for the CUDA build.
python3 -m pip --version >/dev/null 2>&1 || need+=(python3-pip)
command -v pkg-config >/dev/null || need+=(pkg-config)
[ -f /usr/include/gtest/gtest.h ] || need+=(libgtest-dev)
[ -f /usr/include/gmock/gmock.h ] || need+=(libgmock-dev)
# odnn doctor: --archive reads archives through libarchive; its tests build real DLLs.
[ -f /usr/include/archive.h ] || need+=(libarchive-dev)
command -v x86_64-w64-mingw32-gcc >/dev/null || need+=(gcc-mingw-w64-x86-64)
[ -n "$(ls /usr/include/*/openblas*/cblas.h /usr/include/openblas/cblas.h 2>/dev/null)" ] || need+=(libopenblas-dev)
# The Fashion-MNIST example (examples/fashion_mnist): zlib reads the data set's gzipped idx files.
[ -f /usr/include/zlib.h ] || need+=(zlib1g-dev)
[ -f /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ] || need+=(dataset-fashion-mnist)
if [ ${#need[@]} -gt 0 ]; then
  echo "deps: installing ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  $sudo_cmd apt-get install -y -qq "${need[@]}"
fi
cmake_version=$(cmake --version | head -1 | awk '{print $3}')
if [ "$(printf '%s\n3.25\n' "$cmake_version" | sort -V | head -1)" != "3.25" ]; then
  echo "deps: CMake $cmake_version is older than 3.25; installing a newer one from PyPI"
  python3 -m pip install -q 'cmake>=3.25'
fi
