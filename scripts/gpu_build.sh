#!/usr/bin/env bash
# Builds what scripts/gpu_check.sh runs on the GPU machine into build-gpu/: CUDA
# parts on, SQLite and the C++ runtime linked in (that machine has CUDA and
# torch, none of our Debian packages), no tests. Run it here, then carry
# build-gpu to the GPU machine and run scripts/gpu_check.sh there.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
build="${DDPSCOPE_GPU_BUILD:-build-gpu}"
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S . -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DDDPSCOPE_PORTABLE=ON -DBUILD_TESTING=OFF >/dev/null
fi
cmake --build "$build" -j "$(nproc)" --target ddpscope ddpscope_inject bench_cupti_correlation \
  bench_cupti_api_overhead
# What travels: the four binaries, stripped (the device tool carries at most
# 64 MiB with the working tree), and the Python start-up hook, in one folder
# gpu_check.sh finds by itself.
carry="$build-carry"
mkdir -p "$carry"
for f in ddpscope libddpscope_inject.so bench_cupti_correlation bench_cupti_api_overhead; do
  strip -o "$carry/$f" "$build/$f"
done
# record looks for the DDP start-up hook beside the injector (python/): without
# it DDP's buckets are only inferred from the all-reduce pattern.
rm -rf "$carry/python"
cp -r "$build/python" "$carry/python"
echo "built $carry: $(du -sh "$carry" | cut -f1) (carry it, then: scripts/gpu_check.sh $carry)"
ldd "$carry/ddpscope" "$carry/libddpscope_inject.so" | grep -E "sqlite|stdc\+\+|not found" || true
