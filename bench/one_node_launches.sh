#!/usr/bin/env bash
# How far one node's measurement repeats (issue 17; network namespaces: root).
# Launches the sweep bench/model_accuracy.sh measures on one node (1x4, 1x2:
# its workload, bucket sizes and iterations) N times in a row and prints, per
# bucket size, the launches' range and median, and how far the median of k
# launches drawn at random from them moves (p10..p90 over 4000 draws, as a %
# of its median), k = 5 (the bench's LAUNCHES), 9 and 15. The draws come from
# launches made within minutes, so they show what more launches buy within a
# round, not how far the machine's state drifts between rounds. Figures,
# never a test.
#   bench/one_node_launches.sh [N] [TOPOLOGY...]   (default 20 launches; 1x4 1x2)
#   ITERS=K bench/one_node_launches.sh             (measured iterations, default 36)
set -euo pipefail
cd "$(dirname "$0")/.."
ddpscope="$(realpath "${DDPSCOPE_BUILD:-build}")/ddpscope"
launches="${1:-20}"
iters="${ITERS:-36}"
[[ $launches =~ ^[1-9][0-9]*$ ]] || { echo "usage: bench/one_node_launches.sh [N] [TOPOLOGY...]" >&2; exit 2; }
shift $(($# > 0 ? 1 : 0))
if (($# > 0)); then topologies=("$@"); else topologies=(1x4 1x2); fi
out="$(mktemp -d /tmp/ddpscope-one-node-XXXXXX)"
trap 'rm -rf "$out"' EXIT

python3 bench/model_workload.py "$out/w.json"
printf "one node, %s launches each: 32 layers of 512 KiB, 300 us backward each; gloo; bucket MB 0.5,2,8,32;\n" "$launches"
printf "1 warm-up + %s measured iterations per setting; %s, %s cores, load %s (start)\n" \
  "$iters" "$(date -u +%FT%TZ)" "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)"
for t in "${topologies[@]}"; do
  for ((n = 1; n <= launches; n++)); do
    "$ddpscope" tune --workload "$out/w.json" --backend gloo --topology "$t" \
      --bucket-mb 0.5,2,8,32 --iters "$iters" --warmup 1 \
      --json "$out/$t.$n.json" >"$out/$t.$n.log"
  done
done
printf "load %s (end)\n" "$(cut -d' ' -f1-3 /proc/loadavg)"

python3 - "$out" "${topologies[@]}" <<'PY'
import glob, json, random, statistics, sys
out, topologies = sys.argv[1], sys.argv[2:]
random.seed(1)  # the same draws for the same launches
for t in topologies:
    runs = [json.load(open(p))["results"] for p in glob.glob(f"{out}/{t}.*.json")]
    print(f"\n{t}: {len(runs)} launches")
    for mb in sorted({r["bucket_mb"] for r in runs[0]}):
        ms = [next(r["iter_ms_median"] for r in run if r["bucket_mb"] == mb) for run in runs]
        line = f"  {mb:>4g} MB: launches {min(ms):.1f}..{max(ms):.1f} ms, median {statistics.median(ms):.1f}"
        for k in (5, 9, 15):
            if k >= len(ms):
                continue
            draws = sorted(statistics.median(random.sample(ms, k)) for _ in range(4000))
            lo, hi = draws[len(draws) // 10], draws[len(draws) * 9 // 10]
            line += f" | median of {k}: {lo:.1f}..{hi:.1f} ({100 * (hi - lo) / statistics.median(draws):.1f} %)"
        print(line)
PY
