#!/usr/bin/env bash
# What watching a job costs record at many ranks: generates the rank files of
# a DDP-like GPU job (bench_gen_rank_files), then times the live window's
# refreshes over them (bench_live_watch). Figures, never a test.
#
#   bench/live_watch.sh [RANKS] [ITERATIONS] [WINDOW_S]     (defaults: 1024 100 30)
set -euo pipefail
cd "$(dirname "$0")/.."
build="$(realpath "${DDPSCOPE_BUILD:-build}")"
ranks="${1:-1024}" iterations="${2:-100}" window="${3:-30}"
dir="$(mktemp -d /tmp/ddpscope-live-XXXXXX)"
trap 'rm -rf "$dir"' EXIT
"$build/bench_gen_rank_files" --dir "$dir" --ranks "$ranks" --iterations "$iterations" >/dev/null
echo "live watch: $ranks rank files x $iterations iterations ($(du -sh "$dir" | cut -f1)), load $(cut -d' ' -f1-3 /proc/loadavg)"
"$build/bench_live_watch" --dir "$dir" --window "$window"
