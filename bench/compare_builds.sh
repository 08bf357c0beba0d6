#!/usr/bin/env bash
# Two builds side by side: this VM's speed moves 2x from day to day, so a
# figure means something only beside another build's, measured in the same
# run. Runs bench_report_scale, bench_hook_overhead and bench_store_throughput
# of OLD and NEW alternately (old, new, old, new, ...) for --rounds rounds,
# then prints, per figure, each build's median and range and the ratio
# new / old: of the medians, and its spread (lowest new / highest old to
# highest new / lowest old). Below 1 is faster (or smaller) for every figure
# but events/s, where above 1 is faster. Never a gate: figures for a person.
#
# usage: bench/compare_builds.sh OLD_BUILD NEW_BUILD [--rounds N] [--benches LIST]
#   --rounds   rounds of each bench (default 3)
#   --benches  comma-separated: report_scale,hook_overhead,store_throughput (default all)
#   --log DIR  keep every bench's output there (default: a temporary folder, removed)
# A build lacking a bench is reported as such and that bench is skipped.
set -uo pipefail
old="${1:-}" new="${2:-}"
shift 2 2>/dev/null || { echo "usage: $0 OLD_BUILD NEW_BUILD [--rounds N] [--benches LIST] [--log DIR]" >&2; exit 2; }
rounds=3 benches="report_scale,hook_overhead,store_throughput" log=""
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds="$2"; shift 2 ;;
    --benches) benches="$2"; shift 2 ;;
    --log) log="$2"; shift 2 ;;
    *) echo "$0: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || { echo "$0: --rounds N (N >= 1), not '$rounds'" >&2; exit 2; }
for b in "$old" "$new"; do
  [ -d "$b" ] || { echo "$0: $b: not a build directory" >&2; exit 2; }
done
keep=1
[ -z "$log" ] && { log="$(mktemp -d)"; keep=0; }
mkdir -p "$log"
figures="$log/figures.tsv"
: >"$figures"

# Each bench's figures as "name<TAB>value" lines, from its output.
parse() {  # bench, output file
  case "$1" in
    report_scale)
      awk '$2 ~ /^[0-9.]+$/ && $3 == "s" && $1 ~ /^(analysis|csv|json|trace|html|total)$/ {
             print $1 " s\t" $2 }
           /^total/ { for (i = 1; i < NF; ++i) if ($i == "RSS") print "peak RSS MiB\t" $(i + 1) }' "$2" ;;
    hook_overhead)
      sed -nE 's/^median per call: .* added ([0-9.-]+) ns.*/hook ns added per call\t\1/p' "$2" ;;
    store_throughput)
      awk '$1 == "batched" { print "store events/s (higher is faster)\t" $4 }' "$2" ;;
  esac
}

run_one() {  # label, build, bench, round
  local exe="$2/bench_$3" out="$log/$1-$3-$4.txt"
  if [ ! -x "$exe" ]; then
    echo "  $1 has no bench_$3: skipped"
    return
  fi
  (cd "$2" && "./bench_$3") >"$out" 2>&1 || echo "  $1 bench_$3 exited $? (see $out)"
  parse "$3" "$out" | while IFS=$'\t' read -r name value; do
    printf '%s\t%s\t%s\n' "$1" "$name" "$value" >>"$figures"
  done
}

# Builds configured otherwise (one file by file, the other in unity batches,
# or with other flags) differ in their code, not only in their commits:
# each such setting is named before the figures. scripts/build.sh configures
# every build alike.
cache_value() {  # build, key
  sed -n "s/^$2:[A-Z]*=//p" "$1/CMakeCache.txt" 2>/dev/null
}
for key in CMAKE_BUILD_TYPE CMAKE_CXX_FLAGS_RELWITHDEBINFO DDPSCOPE_UNITY; do
  a="$(cache_value "$old" "$key")" b="$(cache_value "$new" "$key")"
  [ "$a" = "$b" ] ||
    echo "compare_builds: warning: $key differs: '$a' (old) against '$b' (new); build both with scripts/build.sh"
done
echo "compare_builds: old $old ($(git -C "$old" rev-parse --short HEAD 2>/dev/null || echo '?')), new $new, $rounds rounds, on $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg)"
for bench in ${benches//,/ }; do
  for ((r = 1; r <= rounds; ++r)); do
    echo "  $bench round $r"
    run_one old "$old" "$bench" "$r"
    run_one new "$new" "$bench" "$r"
  done
done

python3 - "$figures" <<'EOF'
import statistics, sys
from collections import defaultdict
vals = defaultdict(lambda: defaultdict(list))
order = []
for line in open(sys.argv[1]):
    build, name, value = line.rstrip("\n").split("\t")
    if name not in order:
        order.append(name)
    vals[name][build].append(float(value))
print(f"{'figure':36} {'old median (range)':>26} {'new median (range)':>26} {'new/old':>8} {'spread':>14}")
for name in order:
    o, n = vals[name]["old"], vals[name]["new"]
    if not o or not n:
        print(f"{name:36} {'(one build only)':>26}")
        continue
    mo, mn = statistics.median(o), statistics.median(n)
    rng = lambda v: f"{statistics.median(v):.4g} ({min(v):.4g}-{max(v):.4g})"
    ratio = mn / mo if mo else float("nan")
    spread = (f"{min(n) / max(o):.2f}-{max(n) / min(o):.2f}" if min(o) > 0 else "-")
    print(f"{name:36} {rng(o):>26} {rng(n):>26} {ratio:8.2f} {spread:>14}")
EOF
[ "$keep" = 0 ] && rm -rf "$log"
exit 0
