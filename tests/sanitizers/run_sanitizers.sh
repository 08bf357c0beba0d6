#!/usr/bin/env bash
# Builds ddpscope with sanitizers in a build directory of its own and runs
# tests there (docs/reliability.md, "Sanitizers"). Two legs:
#
#   address  ASan + UBSan (+ LeakSanitizer) over every Catch2 test: the whole
#            C++ suite, including the ones that run the injector preloaded
#            into our own workloads and `ddpscope record` around them; and
#            the tests labelled `sanitize`, Python driving only our
#            executables (every command's answer to hostile input).
#   thread   TSan over the capture runtime's tests: its rings, name table and
#            registries in-process (test_unit), and the injector preloaded into
#            workloads that call from many threads, fork, get signalled, and
#            feed the writer thread from CUPTI's, NCCL's and NVTX's callbacks.
#
# Not in either leg: the tests that preload the injector into Python (real
# DDP jobs under torch, plain-Python ranks) or into `sh`, and the sweeps that
# Python drives. Python, torch and sh are not built with the sanitizers, and
# a sanitizer's runtime belongs in the executable (ASan's must come before
# every other library): a sanitized injector preloaded into them would be
# checked by a runtime that does not see the process's allocations and
# threads from the start.
#
# Any sanitizer report fails the leg, whether it came from a test executable
# or from a process a test started whose exit status the test does not look
# at: every report goes to a file under DIR/sanitizer-reports, and the leg
# fails if one is there. Leaks are checked; the only suppressions
# (lsan.supp) are third-party libraries' own allocations.
#
# usage: run_sanitizers.sh address|thread [--phase build|tests|all] [--build DIR]
#                          [--cc CC] [--cxx CXX]
#   --phase  build: configure and build only; tests: run the tests of a leg
#            built before (its reports since that build count); all (the
#            default): both. ctest runs the two phases as two entries, so a
#            leg's tests (one at a time, one core) run beside other tests.
#   --build  the build directory (default: build-asan or build-tsan)
#   --cc, --cxx  the compilers (default: cc, c++): the regular build's
# Prints, for the leg: build time, tests run, passed, failed, skipped,
# reports, and the time the tests took.
# Exit status: 0 all passed and no report; 1 a failure, a report or a failed
# build; 2 bad usage; 77 the compiler cannot build with the sanitizer
# (ctest reports it SKIPPED).
set -uo pipefail
src="$(cd "$(dirname "$0")/../.." && pwd)"
here="$src/tests/sanitizers"
leg="${1:-}"
shift || true
build="" cc="${CC:-cc}" cxx="${CXX:-c++}" phase=all
while [ $# -gt 0 ]; do
  case "$1" in
    --phase) phase="$2"; shift 2 ;;
    --build) build="$2"; shift 2 ;;
    --cc) cc="$2"; shift 2 ;;
    --cxx) cxx="$2"; shift 2 ;;
    *) leg="" ; break ;;
  esac
done

# The capture runtime's tests for TSan: every executable that runs the
# injector's threads (hooks on the job's threads, the writer thread, fork and
# signal handling) or its concurrent structures (test_unit).
tsan_tests=(test_unit test_nccl_hooks test_hidden_real test_gloo_layout test_cuda_fallback
  test_nvtx_capture test_cuda_sync test_cuda_event_timer test_cupti_tracer test_nccl_plugin
  test_nccl_plugin_join test_gpu_capture)

# Open MPI's processes (mpirun ranks): the leaks LeakSanitizer finds there are
# Open MPI's own (lsan.supp), and only a full unwind at each allocation names
# them (Open MPI has no frame pointers, and unloads its plugins before the
# leak check). That unwind makes allocation five times slower, so these tests
# run in a pass of their own.
mpi_tests='^(test_mpi_acceptance|test_replay_backends:mpi):'
# Left out of the ASan leg: a comparison of two timings (our MPI backend
# against MPI_Allreduce, within 35 %), which says nothing about memory and
# which the leg's slow allocations distort (1.45 once, in a clean clone).
timing_tests='^test_mpi_acceptance:'
# Left out under TSan, which cannot follow threads started in a child forked
# from a multi-threaded process (the child reuses a thread id TSan still
# counts as running, and stops: "dup thread with used id"). The ASan leg and
# the regular build run it.
tsan_unsupported="^test_nccl_hooks:a forked child never writes its parent's events$"

case "$leg" in
  address) sanitize=address,undefined name="ASan+UBSan" default_build=build-asan
           targets=(catch2_tests ddpscope) ;;
  thread) sanitize=thread name="TSan" default_build=build-tsan
          targets=("${tsan_tests[@]}") ;;
  *) echo "usage: $0 address|thread [--phase build|tests|all] [--build DIR] [--cc CC] [--cxx CXX]" >&2; exit 2 ;;
esac
case "$phase" in
  build|tests|all) ;;
  *) echo "$0: --phase build|tests|all, not '$phase'" >&2; exit 2 ;;
esac
build="$(realpath -m "${build:-$src/$default_build}")"

leg_start=$(date +%s)
# The compiler must build and link a program with the sanitizer; where it
# cannot (no libasan/libubsan/libtsan), the leg is skipped, never passed.
probe="$(mktemp -d)"
trap 'rm -rf "$probe"' EXIT
printf '#include <thread>\nint main() { std::thread t([] {}); t.join(); return 0; }\n' >"$probe/p.cpp"
if ! "$cxx" -fsanitize="$sanitize" -pthread "$probe/p.cpp" -o "$probe/p" 2>"$probe/err"; then
  echo "SKIPPED: $cxx cannot build with -fsanitize=$sanitize ($(head -c 200 "$probe/err"))"
  exit 77
fi
# Built but cannot run (TSan on a kernel whose address-space layout it does
# not know): nothing was checked, which is a failure, not a skip.
if ! "$probe/p" >"$probe/run" 2>&1; then
  echo "FAILED: a program built with -fsanitize=$sanitize does not run here:"
  head -5 "$probe/run"
  exit 1
fi

# Debug: -O0, asserts on. Compiling dominates the leg, and -O1 compiles 2.5
# times slower for tests that then run about a minute faster over the whole
# suite (docs/reliability.md has the figures). -g1: line tables, all a
# sanitizer's report needs to name file and line; full -g compiles 5-15 %
# slower. Unity batches (cmake/unity.cmake): the ASan build in 411 s
# against 579 s, cold, measured one after the other.
if [ "$phase" = tests ] && [ ! -f "$build/ddpscope-times" ]; then
  echo "FAILED: $build holds no $name build (run --phase build first)"
  exit 1
fi
if [ "$phase" != tests ] && [ ! -f "$build/CMakeCache.txt" ]; then
  generator=()
  command -v ninja >/dev/null && generator=(-G Ninja)
  cmake -S "$src" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" -DDDPSCOPE_SANITIZE="$sanitize" \
    -DCMAKE_C_FLAGS_DEBUG=-g1 -DCMAKE_CXX_FLAGS_DEBUG=-g1 -DDDPSCOPE_UNITY=ON \
    >"$probe/configure.log" 2>&1 || { cat "$probe/configure.log"; exit 1; }
fi
reports="$build/sanitizer-reports"
if [ "$phase" != tests ]; then
  rm -rf "$reports"
  mkdir -p "$reports"
  chmod 1777 "$reports"  # tests run some programs as an unprivileged user
fi
export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:check_initialization_order=1:strict_init_order=1:detect_stack_use_after_return=1:verify_asan_link_order=0:log_path=$reports/report"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:log_path=$reports/report"
export LSAN_OPTIONS="suppressions=$here/lsan.supp:print_suppressions=0:log_path=$reports/report"
export TSAN_OPTIONS="halt_on_error=0:die_after_fork=0:second_deadlock_stack=1:log_path=$reports/report"

if [ "$phase" != tests ]; then
  start=$(date +%s)
  rm -f "$build/ddpscope-times"
  # The build runs each Catch2 executable once to list its cases: the same
  # options apply, and what it reports counts in the tests phase.
  cmake --build "$build" --target "${targets[@]}" -j "$(nproc)" >"$build/sanitizer-build.log" 2>&1 ||
    { tail -40 "$build/sanitizer-build.log"; echo "FAILED: the $name build (log: $build/sanitizer-build.log)"; exit 1; }
  built=$(($(date +%s) - start))
  echo "$name: built in $build ($built s)"
  # scripts/ci_times.sh reads the leg's build and test times from here.
  echo "build $built" >"$build/ddpscope-times"
  [ "$phase" = build ] && exit 0
else
  built=$(awk '$1 == "build" { print $2 }' "$build/ddpscope-times")
fi

# ctest over one pass's selection; adds to the counts.
total=0 failed=0 skipped=0 ctest_rc=0
log="$build/sanitizer-ctest.log"
: >"$log"
# One test at a time: sanitized, a test runs several times slower, and a test
# with a time bound needs its workload's writer thread to get a core
# (test_nccl_hooks "kill -9 keeps every event older than two flush
# intervals": beside another sanitized test on two cores, the writer had
# written none of 1000 events 300 ms later, once in five runs; its waits are
# longer by a fixed factor in sanitized builds, kWriterSlowdown).
run_pass() {  # ASAN_OPTIONS to add, then ctest's selection
  local asan_extra="$1" pass_log="$probe/pass.log"
  shift
  (cd "$build" && ASAN_OPTIONS="$ASAN_OPTIONS$asan_extra" ctest "$@" -j 1 \
     --output-on-failure --timeout 1500) >"$pass_log" 2>&1 || ctest_rc=1
  cat "$pass_log" >>"$log"
  grep -E '^ *[0-9]+/[0-9]+ Test +#.*(\*\*\*|Failed|Exception|Timeout)' "$pass_log"
  local summary
  summary=$(grep -E 'tests passed, [0-9]+ tests failed out of [0-9]+' "$pass_log")
  total=$((total + $(grep -oE 'out of [0-9]+' <<<"$summary" | grep -oE '[0-9]+' || echo 0)))
  failed=$((failed + $(grep -oE '[0-9]+ tests failed' <<<"$summary" | grep -oE '^[0-9]+' || echo 0)))
  skipped=$((skipped + $(grep -cE '^ *[0-9]+/[0-9]+ Test +#.*\*\*\*Skipped' "$pass_log")))
}
start=$(date +%s)
if [ "$leg" = address ]; then
  run_pass "" -L '^(catch2|sanitize)$' -E "$mpi_tests"
  run_pass ":fast_unwind_on_malloc=0" -L '^(catch2|sanitize)$' -R "$mpi_tests" -E "$timing_tests"
else
  run_pass "" -R "^($(IFS='|'; echo "${tsan_tests[*]}")):" -E "$tsan_unsupported"
fi
ran=$(($(date +%s) - start))
echo "tests $ran" >>"$build/ddpscope-times"
found=$(find "$reports" -type f | wc -l)

status=0
if [ "$total" -eq 0 ]; then
  echo "FAILED: no test ran (log: $log)"; tail -20 "$log"
  status=1
fi
[ "$ctest_rc" -ne 0 ] && status=1
if [ "$found" -ne 0 ]; then
  status=1
  echo "sanitizer reports ($found, in $reports):"
  for f in $(find "$reports" -type f | sort | head -10); do
    echo "--- $f"
    grep -m1 -A30 -E 'ERROR: |WARNING: ThreadSanitizer|runtime error' "$f" || head -30 "$f"
  done
fi
printf '%s: %s tests, %s passed, %s failed, %s skipped, %s sanitizer reports; built in %s s, tests ran in %s s, %s s in all\n' \
  "$name" "$total" "$((total - failed - skipped))" "$failed" "$skipped" \
  "$found" "${built:-?}" "$ran" "$(($(date +%s) - leg_start))"
exit $status
