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
  # A fresh build compiles in unity batches (cmake/unity.cmake: 470 s for
  # everything, cold, against 794 s file by file); -DDDPSCOPE_UNITY=OFF on
  # the folder for an edit-compile loop. -g1: line tables and function names
  # (backtraces, perf) without the variables' debug info, which took a third
  # of a batch's compile (28.4 s against 19.5 s for reports' largest).
  g1="-O2 -g1 -DNDEBUG"
  cmake -S . -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDDPSCOPE_UNITY=ON \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="$g1" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$g1" >/dev/null
else
  cmake -S . -B "$build" >/dev/null
fi
targets=()
[ $# -gt 0 ] && targets=(--target "$@")
cmake --build "$build" -j "$(nproc)" "${targets[@]}"
