#!/usr/bin/env bash
# The main job (README): installs what is missing, builds odnn and runs it.
# For now a smoke run of the odnn tool: what was built, which backend a handle gets,
# and which of the cuDNN API's 220 functions are implemented.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
ninja -C build -j "$(nproc)"
build/bin/odnn info
