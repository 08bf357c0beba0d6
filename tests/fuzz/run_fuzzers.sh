#!/usr/bin/env bash
# Builds the fuzz targets of tests/fuzz with clang and libFuzzer (a build
# directory of their own), then runs each, one a core: first over its corpus
# (tests/fuzz/corpus/<target>: the seeds and every input that once failed),
# then fuzzing from there for the time given. Prints, per target, the
# executions, the coverage and the findings (crashes, sanitizer reports,
# hangs, leaks, out-of-memory), with the first lines of each finding's report.
#
# usage: run_fuzzers.sh --seconds N [--build DIR] [--work DIR] [--only TARGET] [--seed S]
#   --build  the clang build directory (default: build-fuzz)
#   --work   new corpus entries, findings and logs (default: DIR/work)
#   --seed   libFuzzer's random seed (default: a new one each run); CI fixes
#            it, so that its short run takes the same path every time
# Exit status: 0 no finding, 1 a finding or a failed build, 77 clang or
# libFuzzer missing (ctest reports it SKIPPED).
set -uo pipefail
src="$(cd "$(dirname "$0")/../.." && pwd)"
seconds="" build="$src/build-fuzz" work="" only="" seed=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --build) build="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    --only) only="$2"; shift 2 ;;
    --seed) seed=(-seed="$2"); shift 2 ;;
    *) echo "usage: $0 --seconds N [--build DIR] [--work DIR] [--only TARGET] [--seed S]" >&2; exit 2 ;;
  esac
done
[[ "$seconds" =~ ^[0-9]+$ ]] && [ "$seconds" -gt 0 ] || { echo "$0: --seconds N (N >= 1)" >&2; exit 2; }
# Absolute: the targets run from inside the work directory.
build="$(realpath -m "$build")"
work="$(realpath -m "${work:-$build/work}")"
# clang (Debian's clang-14 names its driver clang++-14 unless `clang` is installed too).
cxx="${FUZZ_CXX:-}" cc="${FUZZ_CC:-}"
for v in "" -14; do
  [ -z "$cxx" ] && command -v "clang++$v" >/dev/null && cxx="clang++$v" cc="clang$v"
done
cxx="${cxx:-clang++}" cc="${cc:-clang}"

# libFuzzer comes with clang's runtime libraries (Debian: libclang-rt-14-dev).
probe="$(mktemp -d)"
trap 'rm -rf "$probe"' EXIT
printf '#include <cstdint>\n#include <cstddef>\nextern "C" int LLVMFuzzerTestOneInput(const uint8_t*, size_t) { return 0; }\n' \
  > "$probe/p.cpp"
if ! command -v "$cxx" >/dev/null ||
   ! "$cxx" -fsanitize=fuzzer,address,undefined "$probe/p.cpp" -o "$probe/p" 2>"$probe/err"; then
  echo "SKIPPED: $cxx cannot build a libFuzzer target with ASan and UBSan ($(head -c 200 "$probe/err" 2>/dev/null))"
  exit 77
fi

# -g1 as scripts/build.sh: a finding's stack has its lines; variables' debug
# info would cost a third of the compile.
if [ ! -f "$build/CMakeCache.txt" ]; then
  generator=()
  command -v ninja >/dev/null && generator=(-G Ninja)
  cmake -S "$src" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" -DDDPSCOPE_FUZZ=ON \
    -DDDPSCOPE_WITH_CUDA=OFF -DBUILD_TESTING=OFF -DDDPSCOPE_UNITY=ON \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
    >"$probe/configure.log" 2>&1 ||
    { cat "$probe/configure.log"; exit 1; }
fi
start=$(date +%s)
cmake --build "$build" --target fuzz_targets -j "$(nproc)" >"$build/fuzz-build.log" 2>&1 ||
  { tail -40 "$build/fuzz-build.log"; exit 1; }
echo "built the fuzz targets in $build ($(($(date +%s) - start)) s)"
# scripts/ci_times.sh reads the build's time from here.
echo "build $(($(date +%s) - start))" >"$build/ddpscope-times"

# Sanitizer findings end the run with a report; leaks are checked after every input.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
findings_dir="$work/findings-$(date +%Y%m%d-%H%M%S)"
mkdir -p "$work"

# One target's run: its corpus, then fuzzing from there. Its exit status goes
# to $work/<target>.rc, its output to $work/<target>.log.
fuzz_one() {
  local t="$1" dict=()
  rm -f "$work/$t.rc"
  mkdir -p "$work/$t" "$findings_dir/$t"
  [ -f "$src/tests/fuzz/$t.dict" ] && dict=(-dict="$src/tests/fuzz/$t.dict")
  # -timeout: one input taking 10 s is a hang; memory above 2 GiB is a finding.
  (cd "$work" && timeout $((seconds + 300)) "$build/$t" -max_total_time="$seconds" -timeout=10 \
     -rss_limit_mb=2048 -malloc_limit_mb=2048 -print_final_stats=1 -max_len=65536 -error_exitcode=1 \
     -artifact_prefix="$findings_dir/$t/" "${seed[@]}" "${dict[@]}" "$work/$t" "$src/tests/fuzz/corpus/$t") \
    >"$work/$t.log" 2>&1
  echo $? >"$work/$t.rc"
}

# A target fuzzes on one core: as many run at once as there are cores, so the
# time given is each target's, not shared, and the run takes a fraction of
# targets x seconds.
targets=()
for t in $(cat "$build/fuzz_targets.txt" | tr ';' ' '); do
  [ -n "$only" ] && [ "$t" != "$only" ] && continue
  targets+=("$t")
done
if [ ${#targets[@]} -eq 0 ]; then
  echo "$0: --only $only: no such fuzz target (there are: $(tr ';' ' ' <"$build/fuzz_targets.txt"))" >&2
  exit 2
fi
cores="$(nproc)"
for t in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$cores" ]; do wait -n; done
  fuzz_one "$t" &
done
wait

status=0
printf '%-20s %12s %8s %8s %9s  %s\n' target executions cov ft findings result
for t in "${targets[@]}"; do
  log="$work/$t.log"
  rc=$(cat "$work/$t.rc" 2>/dev/null || echo 1)
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
  cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+')
  ft=$(grep -oE 'ft: [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+')
  findings=$(find "$findings_dir/$t" -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) | wc -l)
  result=ok
  if [ "$rc" -ne 0 ] || [ "$findings" -ne 0 ]; then
    result="FINDING (exit $rc; log $log; inputs in $findings_dir/$t)"
    status=1
  fi
  printf '%-20s %12s %8s %8s %9s  %s\n' "$t" "${execs:-?}" "${cov:-?}" "${ft:-?}" "$findings" "$result"
  if [ "$result" != ok ]; then
    grep -m1 -B2 -A12 -E 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error|terminate called|deadly signal' "$log" | sed 's/^/    /'
  fi
done
exit $status
