#!/usr/bin/env bash
# The cost model out of sample (issue 17 item 2; network namespaces: root).
# ONE calibration, on 2x2:inter=1gbit (its inter-node link fitted on that
# shaped link); then, with no refit, measured and predicted sweeps of one
# workload on topologies and bandwidths it never saw: 1x2, 1x4,
# 2x2:inter=400mbit, 2x2:inter=2gbit, 4x1:inter=1gbit. Prints per setting
# predicted, measured and error, per topology the median and the worst
# |error|, and the in-sample 2x2:inter=1gbit line apart. Figures, never a test.
# One node's sweeps (1x2, 1x4) are measured in LAUNCHES launches of their
# ranks (default 5): there Gloo's threads share this machine's cores and a
# launch keeps the state it started in (docs/model.md, "Why one node moves"),
# so one launch is one draw of the job's time, not the time. The table prints
# the launches' median (what the error is against) and their spread, (max -
# min) / median: the measurement's own repeatability, which no prediction beats.
#   bench/model_accuracy.sh [ITERS]          (default 36 measured iterations:
#                                            with 12, 1x2's 0.5 MB iterations
#                                            spread 49-90 ms between p25 and
#                                            p75, and their median moved by
#                                            20 % from round to round)
#   KEEP=DIR bench/model_accuracy.sh         keeps calibration and results in DIR
#   LAUNCHES=N bench/model_accuracy.sh       one node's sweeps in N launches (5)
#   REPREDICT=DIR bench/model_accuracy.sh    no measurement: predicts again from
#                                            DIR's calibration with this build and
#                                            compares with DIR's measured sweeps
set -euo pipefail
cd "$(dirname "$0")/.."
ddpscope="$(realpath "${DDPSCOPE_BUILD:-build}")/ddpscope"
iters="${1:-36}"
launches="${LAUNCHES:-5}"
sizes=0.5,2,8,32
calibrated_on=2x2:inter=1gbit
out_of_sample=(1x2 1x4 2x2:inter=400mbit 2x2:inter=2gbit 4x1:inter=1gbit)
launched_again=(1x2 1x4)
name() { echo "${1//[:=]/_}"; }

if [[ -n ${REPREDICT:-} ]]; then
  out="$REPREDICT"
elif [[ -n ${KEEP:-} ]]; then
  out="$KEEP" && mkdir -p "$out"
else
  out="$(mktemp -d /tmp/ddpscope-model-bench-XXXXXX)"
  trap 'rm -rf "$out"' EXIT
fi
tune() {  # topology, the name of its results (.json, .log), then tune's own flags
  local t="$1" results="$2" && shift 2
  "$ddpscope" tune --workload "$out/w.json" --topology "$t" --bucket-mb "$sizes" \
    --iters "$iters" --warmup 1 "$@" --json "$out/$results.json" >"$out/$results.log"
}
cal=(--calibration "$out/cal.json")

if [[ -z ${REPREDICT:-} ]]; then
  python3 bench/model_workload.py "$out/w.json"
  printf "model accuracy: 32 layers of 512 KiB, 300 us backward each; gloo; bucket MB %s;\n" "$sizes"
  printf "1 warm-up + %s measured iterations per setting; %s, %s cores, load %s (start)\n" \
    "$iters" "$(date -u +%FT%TZ)" "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)"
  # In sample: calibrate there, then measure and predict its sweep.
  tune "$calibrated_on" "$(name "$calibrated_on")" --backend gloo,model --calibrate "${cal[@]}"
  for t in "${out_of_sample[@]}"; do
    tune "$t" "$(name "$t")" --backend gloo,model "${cal[@]}"
  done
  for t in "${launched_again[@]}"; do  # the same sweep, its ranks launched again
    for ((n = 2; n <= launches; n++)); do
      tune "$t" "$(name "$t").again$n" --backend gloo
    done
  done
  printf "load %s (end)\n" "$(cut -d' ' -f1-3 /proc/loadavg)"
else
  for t in "$calibrated_on" "${out_of_sample[@]}"; do
    tune "$t" "$(name "$t").predicted" --backend model "${cal[@]}"
  done
fi

python3 - "$out" "${REPREDICT:+predicted}" "$calibrated_on" "${out_of_sample[@]}" <<'PY'
import glob, json, statistics, sys
out, repredict, topologies = sys.argv[1], sys.argv[2], sys.argv[3:]
name = lambda t: t.replace(":", "_").replace("=", "_")

def medians(path, measured):
    runs = json.load(open(path))["results"]
    return {r["bucket_mb"]: r["iter_ms_median"] for r in runs
            if (r["backend"] != "model") == measured}

def rows(t):
    """(bucket MB, predicted ms, each launch's ms) per setting; the first launch
    is the one measured beside the prediction, the others `.again*` (rounds
    kept before LAUNCHES have one, `.again.json`)."""
    first = medians(f"{out}/{name(t)}.json", True)
    again = [medians(p, True) for p in sorted(glob.glob(f"{out}/{name(t)}.again*.json"))]
    source = f"{out}/{name(t)}.predicted.json" if repredict else f"{out}/{name(t)}.json"
    predicted = medians(source, False)
    return [(mb, predicted[mb], [first[mb]] + [a[mb] for a in again]) for mb in sorted(first)]

print(f"\n{'topology':<20} {'bucket MB':>9} {'predicted ms':>13} {'measured ms':>12}"
      f" {'launches':>9} {'min..max ms':>14} {'spread':>7} {'error':>8}")
summary = []
for t in topologies:
    errors, spreads = [], []
    for mb, p, launched in rows(t):
        # Launched more than once: the measurement is the launches' median,
        # and their spread its own repeatability, which no prediction beats.
        m = statistics.median(launched)
        errors.append(100 * (p - m) / m)
        several = " " * 32
        if len(launched) > 1:
            spreads.append(100 * (max(launched) - min(launched)) / m)
            span = f"{min(launched):.1f}..{max(launched):.1f}"
            several = f"{len(launched):>9} {span:>14} {spreads[-1]:>6.1f}%"
        print(f"{t:<20} {mb:>9g} {p:>13.1f} {m:>12.1f} {several} {errors[-1]:>+7.1f}%")
    worst = max(errors, key=abs)
    spread = statistics.median(spreads) if spreads else None
    summary.append((t, statistics.median(abs(e) for e in errors), worst, spread))
print(f"\n{'topology':<20} {'median |error|':>15} {'worst':>8} {'launch spread, median':>22}")
for i, (t, median, worst, spread) in enumerate(summary):
    label = f"{t} (in sample)" if i == 0 else t
    shown = "" if spread is None else f"{spread:>13.1f}%"
    print(f"{label:<31} {median:>4.1f}% {worst:>+7.1f}% {shown}")
oos = summary[1:]
print(f"out of sample: median |error| per topology {min(s[1] for s in oos):.1f}.."
      f"{max(s[1] for s in oos):.1f}%, worst setting {max((s[2] for s in oos), key=abs):+.1f}%")
PY
