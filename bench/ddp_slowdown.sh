#!/usr/bin/env bash
# Iteration-time slowdown of the example DDP job (or, with --fsdp, the example
# FSDP2 job) under `ddpscope record`.
#
# Runs examples/ddp_train.py (--fsdp: examples/fsdp_train.py, --layers being its
# fully_shard blocks) with N local ranks (--nproc, 2 by default),
# alternately without ddpscope
# (ranks launched here with torchrun's variables, as `record --nproc` does) and
# under `ddpscope record --nproc N`, then compares rank 0's median step time.
# Runs are interleaved (A B A B ...) so that drift in machine load hits both
# variants alike. Only step times are compared: start-up and the merge after the
# job are not part of a training iteration.
#
# usage: bench/ddp_slowdown.sh [--fsdp] [--nproc N] [--pairs N] [--iters N] [--warmup N]
#            [--layers N] [--width N] [--batch N] [--run-timeout S] [--python PY]
#            [--rank-prefix CMD] [--against BUILD] [--record-flags FLAGS] [-- EXTRA...]
#   PY is the torch Python [.venv/bin/python (scripts/setup.sh) if present, else
#   /usr/bin/python3 (Debian's torch)].
#   EXTRA goes to the job in both variants (e.g. -- --bucket-cap-mb 1; with
#   --fsdp, say -- --mixed-precision).
#   CMD runs each rank's Python in both variants (scripts/onegpu_rank.sh: two
#   NCCL ranks on one GPU, each its own NCCL_HOSTID).
#   --against BUILD: the baseline is the job recorded by BUILD's ddpscope (an
#   older build, say), not the plain job: the cost of a change to the injector.
#   --record-flags FLAGS: words added to the measured variant's `record` only
#   (with --against build: the cost of, say, "--metrics-file F --metrics-every 1").
# env:   DDPSCOPE_BUILD  build tree holding ddpscope [build]
#        OMP_NUM_THREADS torch threads per rank [1]
set -euo pipefail

nproc=2 pairs=5 iters=60 warmup=10 layers=8 width=256 batch=32 run_timeout=120
extra=() PY='' prefix=() against='' record_flags=() fsdp=0

usage() { sed -n '14,28p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while (($#)); do
  case $1 in
    --fsdp) fsdp=1; shift ;;
    --nproc) nproc=$2; shift 2 ;;
    --pairs) pairs=$2; shift 2 ;;
    --iters) iters=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --layers) layers=$2; shift 2 ;;
    --width) width=$2; shift 2 ;;
    --batch) batch=$2; shift 2 ;;
    --run-timeout) run_timeout=$2; shift 2 ;;
    --python) PY=$2; shift 2 ;;
    --rank-prefix) prefix=("$2"); shift 2 ;;
    --against) against=$2; shift 2 ;;
    --record-flags) read -ra record_flags <<<"$2"; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    *) usage ;;
  esac
done
[[ $nproc =~ ^[1-9][0-9]*$ ]] || { echo "ddp_slowdown: --nproc must be a positive integer" >&2; exit 2; }
((iters > warmup)) || { echo "ddp_slowdown: --iters must exceed --warmup" >&2; exit 2; }

cd "$(dirname "$0")/.."
# The python3 first on PATH may have no torch: the repo's own torch first.
if [[ -z $PY ]]; then
  PY=/usr/bin/python3
  [[ -x .venv/bin/python ]] && PY=$PWD/.venv/bin/python
fi
DDPSCOPE=${DDPSCOPE_BUILD:-build}/ddpscope
if [[ ! -x $DDPSCOPE ]]; then
  echo "ddp_slowdown: no $DDPSCOPE (build it, or set DDPSCOPE_BUILD)" >&2
  exit 1
fi
# Two ranks each running torch's default thread pool oversubscribe a small
# machine, and the contention noise would swamp a 2% effect.
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}

work=$(mktemp -d /tmp/ddp-slowdown-XXXXXX)
trap 'rm -rf "$work"' EXIT

# Each rank writes its step times (step_ms) into the job's log directory.
if ((fsdp)); then
  job=fsdp log_flag=--fsdp-log
  train_args=(examples/fsdp_train.py --iters "$iters" --blocks "$layers" --width "$width"
              --batch "$batch" "${extra[@]}")
else
  job=ddp log_flag=--ddp-log
  train_args=(examples/ddp_train.py --iters "$iters" --layers "$layers" --width "$width"
              --batch "$batch" "${extra[@]}")
fi

free_port() {
  "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Median step time (ms) of rank 0 in the job's log directory $1, warm-up dropped.
rank0_median() {
  "$PY" - "$1/$job-rank0.json" "$warmup" <<'EOF'
import json, statistics, sys
steps = json.load(open(sys.argv[1]))["step_ms"][int(sys.argv[2]):]
print(f"{statistics.median(steps):.4f}")
EOF
}

# Waits for every pid given; once one fails, the others would wait for it in
# their next collective forever, so they are stopped (as record does).
wait_ranks() {
  local -A live=()
  local p done_pid rc status=0
  for p in "$@"; do live[$p]=1; done
  while ((${#live[@]})); do
    done_pid='' rc=0
    wait -n -p done_pid "${!live[@]}" || rc=$?
    [[ -n $done_pid ]] || return "$rc"
    unset "live[$done_pid]"
    if ((rc && !status)); then
      status=$rc
      kill "${!live[@]}" 2>/dev/null || true
    fi
  done
  return "$status"
}

# Without ddpscope: the ranks started here, the way `record --nproc` does.
run_baseline() {
  local log=$1 port r pids=()
  if [[ -n $against ]]; then
    DDPSCOPE=$against/ddpscope run_ddpscope "$log" baseline
    return
  fi
  port=$(free_port)
  for ((r = 0; r < nproc; r++)); do
    env RANK=$r LOCAL_RANK=$r WORLD_SIZE=$nproc LOCAL_WORLD_SIZE=$nproc MASTER_ADDR=127.0.0.1 \
      MASTER_PORT="$port" timeout --foreground -k 5 "$run_timeout" "${prefix[@]}" "$PY" "${train_args[@]}" \
      "$log_flag" "$log" >>"$log.out" 2>&1 &
    pids+=($!)
  done
  wait_ranks "${pids[@]}"
}

# Under ddpscope, into a fresh output directory. record forwards timeout's
# SIGTERM to its ranks, then merges what they wrote.
run_ddpscope() {
  local log=$1 out flags=("${record_flags[@]}")
  [[ ${2:-} == baseline ]] && flags=()
  out=$(mktemp -d "$work/rec-XXXXXX")
  timeout --foreground -k 5 "$run_timeout" "$DDPSCOPE" record --nproc "$nproc" -o "$out" "${flags[@]}" -- \
    "${prefix[@]}" "$PY" "${train_args[@]}" "$log_flag" "$log" >>"$log.out" 2>&1 || return $?
  # A run that recorded nothing (injector not found, say) measured nothing.
  [[ -f $out/run.db ]] || { echo "ddp_slowdown: no $out/run.db" >>"$log.out"; return 1; }
  rm -rf "$out"
}

# Every rank wrote its step times.
all_logged() {
  local r
  for ((r = 0; r < nproc; r++)); do [[ -f $1/$job-rank$r.json ]] || return 1; done
}

# One run of variant $1 (baseline|ddpscope), numbered $2; prints its median.
measure() {
  local log="$work/$1-$2" rc=0
  mkdir -p "$log"
  "run_$1" "$log" || rc=$?
  # torch 1.13 can deadlock in ProcessGroupGloo's destructor at interpreter
  # exit, after the step times are written: such a run still counts.
  if ((rc == 124)) && all_logged "$log"; then
    echo "ddp_slowdown: note: $1 run $2 hung at exit after writing its step times;" \
      "stopped after ${run_timeout}s" >&2
    rc=0
  fi
  if ((rc)); then
    echo "ddp_slowdown: $1 run $2 failed (status $rc):" >&2
    tail -n 20 "$log.out" >&2
    return 1
  fi
  rank0_median "$log"
}

# The job picks its backend by device (examples/ddp_train.py): NCCL on cuda.
where="gloo, cpu"
[[ " ${extra[*]} " == *" --device cuda "* ]] && where="nccl, cuda"
echo "$job slowdown: $pairs pairs, $nproc ranks ($where), OMP_NUM_THREADS=$OMP_NUM_THREADS," \
  "$PY (torch $("$PY" -c 'import torch; print(torch.__version__)'))," "${train_args[*]}"
echo "rank 0 median step time per run, first $warmup iterations dropped;" \
  "ddpscope: $DDPSCOPE${record_flags[*]:+ record ${record_flags[*]}};${against:+ baseline recorded by $against/ddpscope;} load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-5s %13s %13s %11s\n' pair "baseline ms" "ddpscope ms" "slowdown %"
base=() prof=()
for ((i = 1; i <= pairs; i++)); do
  a=$(measure baseline "$i") || exit 1
  b=$(measure ddpscope "$i") || exit 1
  base+=("$a") prof+=("$b")
  "$PY" -c 'import sys; a, b = map(float, sys.argv[2:]);
print(f"{sys.argv[1]:<5} {a:13.3f} {b:13.3f} {100 * (b / a - 1):+11.2f}")' "$i" "$a" "$b"
done

"$PY" - "${base[*]}" "${prof[*]}" <<'EOF'
import statistics, sys
a = [float(x) for x in sys.argv[1].split()]
b = [float(x) for x in sys.argv[2].split()]
ma, mb = statistics.median(a), statistics.median(b)
slow = 100 * (mb / ma - 1)
pair = [100 * (y / x - 1) for x, y in zip(a, b)]
print(f"baseline  median {ma:.3f} ms  (runs {min(a):.3f} .. {max(a):.3f})")
print(f"ddpscope  median {mb:.3f} ms  (runs {min(b):.3f} .. {max(b):.3f})")
print(f"slowdown  {slow:+.2f} %  (of the medians over runs; per pair: median"
      f" {statistics.median(pair):+.2f} %, range {min(pair):+.2f} .. {max(pair):+.2f} %)")
print(f"target: <= 2 % slowdown -> {'met' if slow <= 2 else 'NOT met'}")
EOF
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
