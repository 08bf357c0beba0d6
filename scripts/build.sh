#!/usr/bin/env bash
# Configures and builds ddpscope into build/ (or $DDPSCOPE_BUILD).
set -euo pipefail
cd "$(dirname "$0")/.."
build="${DDPSCOPE_BUILD:-build}"
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S . -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
fi
cmake --build "$build" -j "$(nproc)"
