#!/usr/bin/env bash
# Fetches the pinned CUTLASS / CuTe C++ headers (the tensor-core convolution kernels of
# the CUDA backend are built on them) from the `nvidia-cutlass` wheel on PyPI into
# third_party/cutlass/include and util/include (ignored by git). CMake finds them there, or wherever
# ODNN_CUTLASS_DIR points. Verifies the wheel's SHA-256; does nothing when present.
set -euo pipefail
cd "$(dirname "$0")/.."
version=4.2.0.0
sha256=f9599ada45c7bcb6bf53f7d3f0a7d154183e53451c01bfa59eecd37dd4a693f6
dest=third_party/cutlass
stamp="$version include util"
if [ -f "$dest/VERSION" ] && [ "$(cat "$dest/VERSION")" = "$stamp" ]; then
  echo "cutlass: $version already in $dest"
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 -m pip download --quiet --no-deps --dest "$tmp" "nvidia-cutlass==$version"
whl=$(ls "$tmp"/nvidia_cutlass-"$version"-*.whl)
echo "$sha256  $whl" | sha256sum -c --quiet
python3 - "$whl" "$tmp/x" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    for n in z.namelist():
        if n.startswith(("cutlass_library/source/include/", "cutlass_library/source/tools/util/include/")):
            z.extract(n, sys.argv[2])
PY
rm -rf "$dest"
mkdir -p "$dest"
mv "$tmp/x/cutlass_library/source/include" "$dest/include"
mkdir -p "$dest/util"
mv "$tmp/x/cutlass_library/source/tools/util/include" "$dest/util/include"
echo "$stamp" > "$dest/VERSION"
echo "cutlass: $version headers in $dest/include and $dest/util/include"
