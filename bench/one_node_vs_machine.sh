#!/usr/bin/env bash
# Does one node's iteration time follow the machine's own speed? N times in a
# row: one sample of bench_machine_repeatability (memcpy, loopback TCP bulk
# and round trip, integer steps), then one launch of the model bench's
# workload on one node at one bucket size (with compute). Prints each pair,
# then the rank correlation (Spearman) of the iteration time with each kind
# of work. Needs root for the emulated topology.
#   bench/one_node_vs_machine.sh [N] [TOPOLOGY] [BUCKET_MB]   (30 1x4 8; ITERS=24)
set -euo pipefail
cd "$(dirname "$0")/.."
build="$(realpath "${DDPSCOPE_BUILD:-build}")"
launches="${1:-30}" topology="${2:-1x4}" bucket_mb="${3:-8}" iters="${ITERS:-24}"
out="$(mktemp -d /tmp/ddpscope-one-node-vs-machine-XXXXXX)"
trap 'rm -rf "$out"' EXIT
python3 bench/model_workload.py "$out/w.json"
printf "one node vs the machine: %s launches of %s at %s MB, %s iterations each; %s\n" \
  "$launches" "$topology" "$bucket_mb" "$iters" "$(date -u +%FT%TZ)"
for ((n = 1; n <= launches; n++)); do
  machine="$("$build/bench_machine_repeatability" --samples 1 --interval 1 | sed -n 2p)"
  "$build/ddpscope" tune --workload "$out/w.json" --backend gloo --topology "$topology" \
    --bucket-mb "$bucket_mb" --iters "$iters" --warmup 1 --json "$out/sweep.json" >/dev/null
  iter_ms="$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["results"][0]["iter_ms_median"])' "$out/sweep.json")"
  printf "%s  iteration %.2f ms\n" "$machine" "$iter_ms" | tee -a "$out/pairs"
done
python3 - "$out/pairs" <<'PY'
import re, statistics, sys
rows = [[float(v) for v in re.findall(r"([\d.]+) (?:GB/s|us|ms)", line)] for line in open(sys.argv[1])]
def ranks(values):
    order = sorted(range(len(values)), key=values.__getitem__)
    r = [0.0] * len(values)
    for position, i in enumerate(order):
        r[i] = position
    return r
def spearman(a, b):  # no ties expected: timings to the nanosecond
    n = len(a)
    return 1 - 6 * sum((x - y) ** 2 for x, y in zip(ranks(a), ranks(b))) / (n * (n * n - 1))
iteration = [r[4] for r in rows]
print(f"iteration ms: median {statistics.median(iteration):.2f}, min..max "
      f"{min(iteration):.2f}..{max(iteration):.2f}")
for k, kind in enumerate(["memcpy GB/s", "tcp bulk GB/s", "tcp rtt us", "alu ms"]):
    print(f"rank correlation of the iteration with {kind}: {spearman([r[k] for r in rows], iteration):+.2f}")
PY
