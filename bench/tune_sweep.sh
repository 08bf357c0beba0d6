#!/usr/bin/env bash
# Wall time of `ddpscope tune` sweeps of one workload at 2 ranks on CPU (Gloo),
# and how it grows with the number of settings: 1, 3 and 7 bucket sizes (7 is
# the default sweep). Prints a table; never part of CI.
#   bench/tune_sweep.sh [WORKLOAD]     (default preset:resnet50)
set -euo pipefail
cd "$(dirname "$0")/.."
ddpscope="${DDPSCOPE_BUILD:-build}/ddpscope"
workload="${1:-preset:resnet50}"
printf "tune sweep: %s, gloo, 2 ranks, default iterations (3 warm-up + 10)\n" "$workload"
printf "%-10s %-22s %10s %14s\n" "settings" "bucket MB" "wall s" "s per setting"
for sizes in 25 5,25,100 1,2,5,10,25,50,100; do
  n=$(tr ',' '\n' <<<"$sizes" | wc -l)
  start=$(date +%s.%N)
  "$ddpscope" tune --workload "$workload" --backend gloo --nproc 2 --bucket-mb "$sizes" >/dev/null
  end=$(date +%s.%N)
  awk -v n="$n" -v s="$sizes" -v a="$start" -v b="$end" \
    'BEGIN { printf "%-10s %-22s %10.2f %14.2f\n", n, s, b - a, (b - a) / n }'
done
