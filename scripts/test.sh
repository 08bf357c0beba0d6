#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite through ctest.
# Ends with where the time went (scripts/ci_times.sh: each build, the ten
# slowest tests, the compiler cache's hit rate, a warning past 60 minutes);
# the last line is ctest's count of tests passed and failed (and skipped):
# ctest lists the tests that did not run after its count, so it is said again.
set -euo pipefail
cd "$(dirname "$0")/.."
build="${DDPSCOPE_BUILD:-build}"
times="$(mktemp -d)"
trap 'rm -rf "$times"' EXIT
begin=$(date +%s)
scripts/setup.sh --packages
echo "setup $(($(date +%s) - begin))" >"$times/phases"
# The PyPI torch downloads (minutes, on a new machine) while the build compiles.
(scripts/setup.sh --venv && echo "venv $(($(date +%s) - begin))" >>"$times/phases") \
  >"$times/venv.log" 2>&1 &
venv_pid=$!
# The compiler cache's counts from here on are this run's.
command -v ccache >/dev/null && ccache --zero-stats >/dev/null
start=$(date +%s)
scripts/build.sh
echo "main $(($(date +%s) - start))" >>"$times/phases"
venv_status=0
wait "$venv_pid" || venv_status=$?
cat "$times/venv.log"
[ "$venv_status" -eq 0 ] || exit "$venv_status"
# Configured again now that .venv is there: its tests are registered with it.
scripts/build.sh >/dev/null
status=0
(cd "$build" && ctest --output-on-failure -j 2 "$@") | tee "$times/ctest.log" || status=$?
echo "total $(($(date +%s) - begin))" >>"$times/phases"
scripts/ci_times.sh "$build" "$times/phases" "$times/ctest.log"
count="$(grep -E '^[0-9]+% tests passed' "$times/ctest.log" | tail -1 || true)"
skipped="$(grep -cE '^[[:space:]]*[0-9]+ - .* \(Skipped\)$' "$times/ctest.log" || true)"
if [ -n "$count" ]; then
  [ "$skipped" -gt 0 ] && count+=", $skipped skipped"
  echo "$count"
fi
exit "$status"
