#!/usr/bin/env bash
# Where a scripts/test.sh run's time went, printed at its end (docs/reliability.md):
# each build (main, the sanitizer legs, the fuzz targets), the ten slowest
# tests, the compiler cache's hit rate, and, past WARN_MINUTES of the run, one
# warning line naming the slowest builds and tests. It never fails a run for
# time: this VM's speed moves 2x from day to day, so a time gate would fail
# good submissions on a slow day.
#
# usage: scripts/ci_times.sh BUILD PHASES CTEST_LOG
#   BUILD      the regular build directory (the legs build under it)
#   PHASES     lines "setup|main|venv|total SECONDS" from scripts/test.sh
#   CTEST_LOG  ctest's output
set -uo pipefail
[ $# -eq 3 ] || { echo "usage: $0 BUILD PHASES CTEST_LOG" >&2; exit 2; }
build="$1" phases="$2" log="$3"
WARN_MINUTES=${DDPSCOPE_WARN_MINUTES:-60}

phase() { awk -v k="$1" '$1 == k { v = $2 } END { print (v == "" ? "?" : v) }' "$phases"; }
# A leg's own account: lines "build SECONDS" (and "tests"/"fuzz" SECONDS) that
# run_sanitizers.sh and run_fuzzers.sh write into their build directory.
leg() { awk -v k="$2" '$1 == k { print $2 }' "$build/$1/ddpscope-times" 2>/dev/null; }

builds=$(
  printf 'main build\t%s\n' "$(phase main)"
  printf 'ASan+UBSan build\t%s\n' "$(leg asan-build build)"
  printf 'TSan build\t%s\n' "$(leg tsan-build build)"
  printf 'fuzz build\t%s\n' "$(leg fuzz-build build)"
)
# ctest's lines: "  12/501 Test  #37: NAME ......   Passed   12.34 sec".
tests=$(sed -nE 's/^ *[0-9]+\/[0-9]+ +Test +#[0-9]+: (.*[^ .]) \.+.* ([0-9]+\.[0-9]+) sec$/\2\t\1/p' "$log" |
  sort -t$'\t' -k1,1 -gr)

echo
echo "== where the time went (scripts/ci_times.sh)"
printf '%-28s %8s\n' "Debian's packages" "$(phase setup) s"
printf '%-28s %8s\n' "PyPI torch ready at" "$(phase venv) s"; echo "  (the PyPI torch downloads beside the main build)"
while IFS=$'\t' read -r what secs; do
  printf '%-28s %8s\n' "$what" "${secs:-?} s"
done <<<"$builds"
printf '%-28s %8s\n' "the whole run" "$(phase total) s"
echo "ten slowest tests:"
head -10 <<<"$tests" | while IFS=$'\t' read -r secs name; do printf '  %8.1f s  %s\n' "$secs" "$name"; done
if command -v ccache >/dev/null; then
  ccache --print-stats | awk -F'\t' '
    $1 == "direct_cache_hit" || $1 == "preprocessed_cache_hit" { hit += $2 }
    $1 == "cache_miss" { miss = $2 }
    END { n = hit + miss; printf "compiler cache: %d of %d compiles hit (%.0f %%)\n", hit, n, n ? 100 * hit / n : 0 }'
else
  echo "compiler cache: none (ccache is not installed)"
fi

total=$(phase total)
if [[ $total =~ ^[0-9]+$ ]] && [ "$total" -gt $((WARN_MINUTES * 60)) ]; then
  slow_builds=$(awk -F'\t' '$2 ~ /^[0-9]+$/' <<<"$builds" | sort -t$'\t' -k2,2 -gr | head -3 | awk -F'\t' '{ printf "%s%s %s s", sep, $1, $2; sep = ", " }')
  slow_tests=$(head -3 <<<"$tests" | awk -F'\t' '{ printf "%s%s %.0f s", sep, $2, $1; sep = ", " }')
  echo "WARNING: this run took $((total / 60)) min, past ${WARN_MINUTES} of CI's 90; slowest builds: $slow_builds; slowest tests: $slow_tests"
fi
exit 0
