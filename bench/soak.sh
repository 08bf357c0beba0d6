#!/usr/bin/env bash
# The soak: a long DDP job (forking DataLoader workers, a background thread,
# signals) recorded over and over with ranks killed by kill -9 at random
# points, then the memory of a long recording against the same job without
# ddpscope. Prints a row per kill round and the memory growth; exit 1 if a
# round failed. Figures, never a test (bench/soak.py says what is checked).
#   bench/soak.sh MINUTES
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 bench/soak.py "$@"
