#!/usr/bin/env bash
# Measured tune sweeps of one workload on two emulated topologies (network
# namespaces; root): one node of 4 ranks, and 2 nodes of 2 joined by a 1 Gbit/s
# link. Prints each sweep and, per bucket size, the two iteration times side by
# side with their ratio and each topology's best size. Figures, never a test.
#   bench/topology_sweep.sh [WORKLOAD] [BUCKET_MB_LIST] [ITERS]
#   (defaults: preset:resnet50  1,5,25,100  5)
set -euo pipefail
cd "$(dirname "$0")/.."
ddpscope="${DDPSCOPE_BUILD:-build}/ddpscope"
workload="${1:-preset:resnet50}"
sizes="${2:-1,5,25,100}"
iters="${3:-5}"
topologies=(1x4 2x2:inter=1gbit)
out="$(mktemp -d /tmp/ddpscope-topology-bench-XXXXXX)"
trap 'rm -rf "$out"' EXIT

printf "topology sweep: %s, gloo, 4 ranks, bucket MB %s, 1 warm-up + %s measured iterations\n" \
  "$workload" "$sizes" "$iters"
printf "machine: %s cores, %s\n\n" "$(nproc)" "$(uname -r)"
for i in "${!topologies[@]}"; do
  "$ddpscope" tune --workload "$workload" --topology "${topologies[$i]}" --bucket-mb "$sizes" \
    --iters "$iters" --warmup 1 --json "$out/$i.json"
  echo
done
python3 - "$out/0.json" "$out/1.json" <<'PY'
import json, sys
runs = [json.load(open(p)) for p in sys.argv[1:]]
names = [r["results"][0]["topology"] for r in runs]
table = [{row["bucket_mb"]: row for row in r["results"]} for r in runs]
print(f"{'bucket MB':>10} {names[0] + ' ms':>14} {names[1] + ' ms':>24} {'ratio':>8}")
for mb in sorted(table[0]):
    a, b = table[0][mb]["iter_ms_median"], table[1][mb]["iter_ms_median"]
    print(f"{mb:>10g} {a:>14.2f} {b:>24.2f} {b / a:>8.2f}")
for name, r in zip(names, runs):
    rec = r["recommendation"]
    print(f"best on {name}: bucket_cap_mb={rec['bucket_mb']:g}, {rec['iter_ms_median']:.2f} ms")
PY
