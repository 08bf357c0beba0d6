#!/usr/bin/env bash
# merge + report at many ranks: generates the rank files of a DDP-like GPU job
# (bench_gen_rank_files: 10 buckets per iteration, 35 kernels, one straggler,
# hosts of 8 ranks with their own clocks), then times the real commands:
# `ddpscope merge`, `ddpscope report` on the terminal, the same with every
# file output (JSON, CSV, HTML, trace), a part of the run (`--ranks`,
# `--iterations`), and, where the build has it, `report DIR` with every
# output: the rank files read together, unmerged (its JSON checked equal to
# the merged run's). Prints wall time and peak resident memory of each (all
# of it and the heap).
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

# One command: its wall seconds and peak resident memory (MiB), sampled
# every 20 ms from /proc: all of it, and its anonymous part (the heap; the
# rest is run.db's pages SQLite maps, the OS's file cache, reclaimable).
timed() {
  local label="$1"
  shift
  python3 - "$dir" "$@" >"$dir/time" <<'PY' ||
import subprocess, sys, time
out = open(sys.argv[1] + "/cmd.out", "w")
err = open(sys.argv[1] + "/cmd.err", "w")
t0 = time.monotonic()
p = subprocess.Popen(sys.argv[2:], stdout=out, stderr=err)
peak = {"VmRSS": 0, "RssAnon": 0}
while p.poll() is None:
    try:
        for line in open(f"/proc/{p.pid}/status"):
            key, _, value = line.partition(":")
            if key in peak:
                peak[key] = max(peak[key], int(value.split()[0]))
    except (FileNotFoundError, ProcessLookupError, ValueError):
        pass
    time.sleep(0.02)
print(f"{time.monotonic() - t0:.1f} {peak['VmRSS'] // 1024} {peak['RssAnon'] // 1024} {p.returncode}")
PY
    { echo "$label: the sampler failed"; exit 1; }
  read -r wall mib anon rc <"$dir/time"
  cp "$dir/cmd.out" "$dir/${label// /_}.out"
  [ "$rc" = 0 ] || { echo "$label failed (exit $rc):"; cat "$dir/cmd.err"; exit 1; }
  printf "%-28s %8.1f s   peak RSS %6d MiB (heap %6d MiB)\n" "$label" "$wall" "$mib" "$anon"
  local v="${label//[^a-z]/_}"
  eval "${v}_s=$wall ${v}_mib=$mib ${v}_anon=$anon"
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
mid=$((iterations / 2))
timed "report --iterations $mid-$((mid + 9))" "$ddp" report "$dir/run.db" --iterations "$mid-$((mid + 9))"
printf "\nrun.db %s, trace %s, report.json %s\n" "$(du -h "$dir/run.db" | cut -f1)" \
  "$(du -h "$dir/run.trace" | cut -f1)" "$(du -h "$dir/r.json" | cut -f1)"
total=$(echo "$merge_s + $report__every_output_s" | bc)
peak=$((merge_mib > report__every_output_mib ? merge_mib : report__every_output_mib))
heap=$((merge_anon > report__every_output_anon ? merge_anon : report__every_output_anon))
printf "merge + report with every output: %.1f s (target <= 60 s), peak RSS %d MiB, heap %d MiB (target <= 4096)\n" \
  "$total" "$peak" "$heap"
grep -A2 "^recommendations" "$dir/report.out" | head -3
if "$ddp" report --help | grep -q "directory of rank files"; then
  timed "report dir, every output" "$ddp" report -q "$dir/ranks" --json "$dir/u.json" \
    --csv "$dir/ucsv" --html "$dir/u.html" --trace "$dir/u.trace"
  same="differs from the merged run's"
  cmp -s <(sed "s#$dir/run.db#RUN#" "$dir/r.json") <(sed "s#$dir/ranks#RUN#" "$dir/u.json") &&
    same="equal to the merged run's"
  printf "report DIR with every output: %.1f s, %.2fx merge + report with every output; JSON %s\n" \
    "$report_dir__every_output_s" "$(echo "$report_dir__every_output_s / $total" | bc -l)" "$same"
fi
