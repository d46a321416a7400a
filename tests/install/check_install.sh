#!/usr/bin/env bash
# Installs odnn into a scratch prefix, moves the tree (it must be relocatable), then
# builds and runs a consumer through find_package(odnn) and through pkg-config.
set -euo pipefail
build=$1 src=$2 work=$3 cc=$4 link_flags=${5:-}  # $5: e.g. the sanitizer runtime of an ODNN_SANITIZE build
rm -rf "$work"
mkdir -p "$work"
cmake --install "$build" --prefix "$work/prefix" > "$work/install.log"
mv "$work/prefix" "$work/moved"
prefix="$work/moved"
for f in include/cudnn.h include/odnn/odnn.h lib/libcudnn.so.9 lib/cmake/odnn/odnnConfig.cmake lib/pkgconfig/odnn.pc bin/odnn; do
  [ -e "$prefix/$f" ] || { echo "install: missing $f"; exit 1; }
done
"$prefix/bin/odnn" info > /dev/null
# find_package
cmake -S "$src/tests/install/consumer" -B "$work/consumer" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
      -DCMAKE_EXE_LINKER_FLAGS="$link_flags" > "$work/consumer.log"
cmake --build "$work/consumer" >> "$work/consumer.log"
"$work/consumer/consumer"
# pkg-config
if command -v pkg-config > /dev/null; then
  flags=$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs odnn)
  # shellcheck disable=SC2086
  "$cc" "$src/tests/install/consumer/main.c" $flags $link_flags -Wl,--disable-new-dtags,-rpath,"$prefix/lib" \
      -o "$work/pc_consumer"
  "$work/pc_consumer"
else
  echo "pkg-config not found: pkg-config check skipped"
fi
