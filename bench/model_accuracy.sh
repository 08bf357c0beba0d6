#!/usr/bin/env bash
# The cost model against measurement on the issue's two emulated topologies
# (network namespaces; root): per round, one calibration whose inter-node
# link is fitted on 2x2:inter=1gbit, then measured and predicted sweeps of
# the same workload on 2x2:inter=1gbit and on 1x4 (the workload and sizes
# of tests/model/test_emulated_validation.py). Prints each round's error
# table and, at the end, every round's median |error| per topology and the
# median of those. Figures, never a test.
#   bench/model_accuracy.sh [ROUNDS] [ITERS] [SHAPED]
#   (defaults: 3  12  2x2:inter=1gbit; SHAPED: any 4-rank multi-node topology)
set -euo pipefail
cd "$(dirname "$0")/.."
ddpscope="$(realpath "${DDPSCOPE_BUILD:-build}")/ddpscope"
rounds="${1:-3}"
iters="${2:-12}"
shaped="${3:-2x2:inter=1gbit}"
sizes=0.5,2,8,32
# KEEP=DIR keeps the calibrations and results there (to re-predict them later).
if [[ -n ${KEEP:-} ]]; then
  out="$KEEP" && mkdir -p "$out"
else
  out="$(mktemp -d /tmp/ddpscope-model-bench-XXXXXX)"
  trap 'rm -rf "$out"' EXIT
fi
python3 - "$out/w.json" <<'PY'
import json, sys
params = [{"name": f"layer{i}.weight", "numel": 131072, "dtype": "float32",
           "backward_us": 300.0} for i in range(32)]
json.dump({"name": "layers", "params": params, "forward_us": 2000, "optimizer_us": 500},
          open(sys.argv[1], "w"))
PY
printf "model accuracy: 32 layers of 512 KiB, 300 us backward each; gloo, 4 ranks; bucket MB %s;\n" "$sizes"
printf "%s rounds of calibrate + sweep, 1 warm-up + %s measured iterations; machine: %s cores, load %s\n\n" \
  "$rounds" "$iters" "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq 1 "$rounds"); do
  for t in "$shaped" 1x4; do
    cal=(--calibration "$out/cal$r.json")
    [[ $t == "$shaped" ]] && cal+=(--calibrate)
    "$ddpscope" tune --workload "$out/w.json" --backend gloo,model --topology "$t" "${cal[@]}" \
      --bucket-mb "$sizes" --iters "$iters" --warmup 1 --json "$out/$r-${t%%:*}.json" \
      | sed -n '/^model vs measurement/,$p'
  done
done
python3 - "$out" "$rounds" "${shaped%%:*}" <<'PY'
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
for t in (sys.argv[3], "1x4"):
    errs = [json.load(open(f"{out}/{r}-{t}.json"))["validation"]["median_abs_error_pct"]
            for r in range(1, rounds + 1)]
    print(f"{t}: median |error| per round " + ", ".join(f"{e:.1f}%" for e in errs) +
          f"; median {statistics.median(errs):.1f}%")
PY
