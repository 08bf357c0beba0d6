#!/usr/bin/env bash
# The injector's own memory over time in a process with no allocations of its
# own (the NCCL test double): a steady job and one whose threads come and go.
# Figures, never a test (bench/injector_memory.py says what is measured).
#   bench/injector_memory.sh MINUTES [steady|churn]
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 bench/injector_memory.py "$@"
