#!/usr/bin/env bash
# Configures and builds ddpscope into build/ (or $DDPSCOPE_BUILD): every
# target, or only the TARGETs named (scripts/demo.sh builds what it runs).
#   scripts/build.sh [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."
build="${DDPSCOPE_BUILD:-build}"
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
# Configured every time (seconds): what the configure found may have changed
# since, e.g. .venv's torch installed after scripts/demo.sh configured.
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S . -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
else
  cmake -S . -B "$build" >/dev/null
fi
targets=()
[ $# -gt 0 ] && targets=(--target "$@")
cmake --build "$build" -j "$(nproc)" "${targets[@]}"
