#!/usr/bin/env bash
# How often a test passes on this machine (issue 17: "the model tests pass
# at least 9 times in 10; say how you measured that"). Runs the ctest tests
# matching REGEX N times, one after the other, in an existing build; prints
# a line per run (start time, load average, result, and the test's own
# "median |error|" lines where it prints them) and the count at the end; a
# failed run's full log is kept and named.
# Never a test itself: a measurement of one.
#   scripts/repeat_test.sh N REGEX      e.g. 10 "model: EmulatedValidation"
set -uo pipefail
cd "$(dirname "$0")/../${DDPSCOPE_BUILD:-build}" || exit 2
[[ $# -eq 2 && $1 =~ ^[1-9][0-9]*$ ]] || { echo "usage: scripts/repeat_test.sh N REGEX" >&2; exit 2; }
runs=$1 regex=$2 passed=0
log="$(mktemp /tmp/ddpscope-repeat-XXXXXX)"
trap 'rm -f "$log"' EXIT
for i in $(seq 1 "$runs"); do
  start=$(date -u +%T) load=$(cut -d' ' -f1 /proc/loadavg)
  ctest -R "$regex" -V >"$log" 2>&1
  if grep -q "(Skipped)" "$log"; then result=skipped
  elif grep -q "100% tests passed" "$log"; then result=passed && passed=$((passed + 1))
  else
    # Kept: a failure seen once must be readable afterwards.
    result="FAILED (log kept: $log.run$i)" && cp "$log" "$log.run$i"
  fi
  # The test's own lines ("NAME: median |error| X% (bound Y%)"), once each.
  medians=$(grep -o "[^ ]*: median |error| [0-9.]*% (bound" "$log" |
    sed 's/ median |error|//; s/ (bound//' | tr '\n' ' ')
  echo "run $i of $runs, $start UTC, load $load: $result  $medians"
done
echo "$passed of $runs runs passed"
