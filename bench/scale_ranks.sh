#!/usr/bin/env bash
# merge + report at many ranks: generates the rank files of a DDP-like GPU job
# (bench_gen_rank_files: 10 buckets per iteration, 35 kernels, one straggler,
# hosts of 8 ranks with their own clocks), then times the real commands:
# `ddpscope merge`, `ddpscope report` on the terminal, the same with every
# file output (JSON, CSV, HTML, trace), and a part of the run (`--ranks`,
# `--iterations`). Prints wall time and peak resident memory of each.
# Target (issue 18): merge + report <= 60 s and <= 4 GiB at 1,024 ranks x 500
# iterations. Figures, never a test.
#
#   bench/scale_ranks.sh [RANKS] [ITERATIONS] [DIR]     (defaults: 1024 500 /tmp)
# Needs about 2 GB of disk per 1,024 x 500 for the rank files and as much for run.db.
set -euo pipefail
cd "$(dirname "$0")/.."
build="$(realpath "${DDPSCOPE_BUILD:-build}")"
ranks="${1:-1024}" iterations="${2:-500}"
dir="$(mktemp -d "${3:-/tmp}/ddpscope-scale-XXXXXX")"
trap 'rm -rf "$dir"' EXIT

# One command: its wall seconds and peak RSS (MiB), from GNU time.
timed() {
  local label="$1"
  shift
  /usr/bin/time -f "%e %M" -o "$dir/time" "$@" >"$dir/$label.out" 2>"$dir/$label.err" ||
    { echo "$label failed:"; cat "$dir/$label.err"; exit 1; }
  read -r wall kib <"$dir/time"
  printf "%-28s %8.1f s   peak RSS %6d MiB\n" "$label" "$wall" $((kib / 1024))
  eval "${label//[^a-z]/_}_s=$wall ${label//[^a-z]/_}_mib=$((kib / 1024))"
}

printf "scale: %s ranks x %s iterations; machine: %s cores, load %s\n" "$ranks" "$iterations" \
  "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)"
"$build/bench_gen_rank_files" --dir "$dir/ranks" --ranks "$ranks" --iterations "$iterations"
printf "rank files: %s\n\n" "$(du -sh "$dir/ranks" | cut -f1)"
ddp="$build/ddpscope"
timed merge "$ddp" merge "$dir/ranks" -o "$dir/run.db"
timed report "$ddp" report "$dir/run.db"
timed "report, every output" "$ddp" report -q "$dir/run.db" --json "$dir/r.json" \
  --csv "$dir/csv" --html "$dir/r.html" --trace "$dir/run.trace"
timed "report --ranks 0-7" "$ddp" report "$dir/run.db" --ranks 0-7
timed "report --iterations 100-109" "$ddp" report "$dir/run.db" --iterations 100-109
printf "\nrun.db %s, trace %s, report.json %s\n" "$(du -h "$dir/run.db" | cut -f1)" \
  "$(du -h "$dir/run.trace" | cut -f1)" "$(du -h "$dir/r.json" | cut -f1)"
total=$(echo "$merge_s + $report__every_output_s" | bc)
peak=$((merge_mib > report__every_output_mib ? merge_mib : report__every_output_mib))
printf "merge + report with every output: %.1f s (target <= 60 s), peak RSS %d MiB (target <= 4096)\n" \
  "$total" "$peak"
grep -A2 "^recommendations" "$dir/report.out" | head -3
