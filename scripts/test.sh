#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite through ctest.
# The last line is ctest's count of tests passed and failed (and skipped):
# ctest lists the tests that did not run after its count, so it is said again.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
cd "${DDPSCOPE_BUILD:-build}"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
status=0
ctest --output-on-failure -j 2 "$@" | tee "$log" || status=$?
count="$(grep -E '^[0-9]+% tests passed' "$log" | tail -1 || true)"
skipped="$(grep -cE '^[[:space:]]*[0-9]+ - .* \(Skipped\)$' "$log" || true)"
if [ -n "$count" ]; then
  [ "$skipped" -gt 0 ] && count+=", $skipped skipped"
  echo "$count"
fi
exit "$status"
