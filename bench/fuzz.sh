#!/usr/bin/env bash
# Fuzzes every parser of user input for MINUTES each, one core a target (as
# many targets at once as there are cores), in a clang
# build of its own (build-fuzz/). Prints per target the executions, the
# coverage (libFuzzer's cov: edges, ft: features) and the findings; new
# corpus entries and any finding's input stay under build-fuzz/work/.
# docs/reliability.md ("Fuzzing") has the figures of a run.
#
# usage: bench/fuzz.sh MINUTES [TARGET]
set -euo pipefail
cd "$(dirname "$0")/.."
minutes="${1:-}"
[[ "$minutes" =~ ^[0-9]+$ ]] && [ "$minutes" -gt 0 ] || { echo "usage: $0 MINUTES [TARGET]" >&2; exit 2; }
only=()
[ $# -ge 2 ] && only=(--only "$2")
exec tests/fuzz/run_fuzzers.sh --seconds $((minutes * 60)) --build build-fuzz "${only[@]}"
