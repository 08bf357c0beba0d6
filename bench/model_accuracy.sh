#!/usr/bin/env bash
# The cost model out of sample (issue 17 item 2; network namespaces: root).
# ONE calibration, on 2x2:inter=1gbit (its inter-node link fitted on that
# shaped link); then, with no refit, measured and predicted sweeps of one
# workload on topologies and bandwidths it never saw: 1x2, 1x4,
# 2x2:inter=400mbit, 2x2:inter=2gbit, 4x1:inter=1gbit. Prints per setting
# predicted, measured and error, per topology the median and the worst
# |error|, and the in-sample 2x2:inter=1gbit line apart. Figures, never a test.
#   bench/model_accuracy.sh [ITERS]          (default 36 measured iterations:
#                                            with 12, 1x2's 0.5 MB iterations
#                                            spread 49-90 ms between p25 and
#                                            p75, and their median moved by
#                                            20 % from round to round)
#   KEEP=DIR bench/model_accuracy.sh         keeps calibration and results in DIR
#   REPREDICT=DIR bench/model_accuracy.sh    no measurement: predicts again from
#                                            DIR's calibration with this build and
#                                            compares with DIR's measured sweeps
set -euo pipefail
cd "$(dirname "$0")/.."
ddpscope="$(realpath "${DDPSCOPE_BUILD:-build}")/ddpscope"
iters="${1:-36}"
sizes=0.5,2,8,32
calibrated_on=2x2:inter=1gbit
out_of_sample=(1x2 1x4 2x2:inter=400mbit 2x2:inter=2gbit 4x1:inter=1gbit)
name() { echo "${1//[:=]/_}"; }

if [[ -n ${REPREDICT:-} ]]; then
  out="$REPREDICT"
elif [[ -n ${KEEP:-} ]]; then
  out="$KEEP" && mkdir -p "$out"
else
  out="$(mktemp -d /tmp/ddpscope-model-bench-XXXXXX)"
  trap 'rm -rf "$out"' EXIT
fi
tune() {  # topology, then tune's own flags
  local t="$1" && shift
  "$ddpscope" tune --workload "$out/w.json" --topology "$t" --calibration "$out/cal.json" \
    --bucket-mb "$sizes" --iters "$iters" --warmup 1 "$@" >"$out/$(name "$t").log"
}

if [[ -z ${REPREDICT:-} ]]; then
  python3 - "$out/w.json" <<'PY'
import json, sys
params = [{"name": f"layer{i}.weight", "numel": 131072, "dtype": "float32",
           "backward_us": 300.0} for i in range(32)]
json.dump({"name": "layers", "params": params, "forward_us": 2000, "optimizer_us": 500},
          open(sys.argv[1], "w"))
PY
  printf "model accuracy: 32 layers of 512 KiB, 300 us backward each; gloo; bucket MB %s;\n" "$sizes"
  printf "1 warm-up + %s measured iterations per setting; %s, %s cores, load %s (start)\n" \
    "$iters" "$(date -u +%FT%TZ)" "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)"
  # In sample: calibrate there, then measure and predict its sweep.
  tune "$calibrated_on" --backend gloo,model --calibrate --json "$out/$(name "$calibrated_on").json"
  for t in "${out_of_sample[@]}"; do
    tune "$t" --backend gloo,model --json "$out/$(name "$t").json"
  done
  printf "load %s (end)\n" "$(cut -d' ' -f1-3 /proc/loadavg)"
else
  for t in "$calibrated_on" "${out_of_sample[@]}"; do
    tune "$t" --backend model --json "$out/$(name "$t").predicted.json"
  done
fi

python3 - "$out" "${REPREDICT:+predicted}" "$calibrated_on" "${out_of_sample[@]}" <<'PY'
import json, statistics, sys
out, repredict, topologies = sys.argv[1], sys.argv[2], sys.argv[3:]
name = lambda t: t.replace(":", "_").replace("=", "_")

def rows(t):
    """(bucket MB, predicted ms, measured ms) per setting."""
    runs = json.load(open(f"{out}/{name(t)}.json"))["results"]
    measured = {r["bucket_mb"]: r["iter_ms_median"] for r in runs if r["backend"] != "model"}
    if repredict:
        runs = json.load(open(f"{out}/{name(t)}.predicted.json"))["results"]
    predicted = {r["bucket_mb"]: r["iter_ms_median"] for r in runs if r["backend"] == "model"}
    return [(mb, predicted[mb], measured[mb]) for mb in sorted(measured)]

print(f"\n{'topology':<20} {'bucket MB':>9} {'predicted ms':>13} {'measured ms':>12} {'error':>8}")
summary = []
for t in topologies:
    errors = []
    for mb, p, m in rows(t):
        errors.append(100 * (p - m) / m)
        print(f"{t:<20} {mb:>9g} {p:>13.1f} {m:>12.1f} {errors[-1]:>+7.1f}%")
    worst = max(errors, key=abs)
    summary.append((t, statistics.median(abs(e) for e in errors), worst))
print(f"\n{'topology':<20} {'median |error|':>15} {'worst':>8}")
for i, (t, median, worst) in enumerate(summary):
    label = f"{t} (in sample)" if i == 0 else t
    print(f"{label:<31} {median:>4.1f}% {worst:>+7.1f}%")
oos = summary[1:]
print(f"out of sample: median |error| per topology {min(s[1] for s in oos):.1f}.."
      f"{max(s[1] for s in oos):.1f}%, worst setting {max((s[2] for s in oos), key=abs):+.1f}%")
PY
