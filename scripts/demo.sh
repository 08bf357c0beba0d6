#!/usr/bin/env bash
# The first thing to run: installs what is missing, builds what it runs (the
# ddpscope executable, the injector and the DDP start-up hook), records the
# bundled example DDP job on 2 CPU ranks (Gloo) and prints the report.
set -euo pipefail
cd "$(dirname "$0")/.."
begin=$(date +%s)
# Debian's packages only: the PyPI torch (6 GB) is for scripts/test.sh.
scripts/setup.sh --demo
installed=$(date +%s)
scripts/build.sh ddpscope ddpscope_inject ddpscope_python_hook
built=$(date +%s)
build="${DDPSCOPE_BUILD:-build}"

# The PyPI torch when scripts/test.sh has installed it (.venv); else Debian's
# torch, which lives in /usr/bin/python3 (not necessarily the python3 on PATH).
python=.venv/bin/python
[[ -x $python ]] || python=/usr/bin/python3

# Two ranks each running torch's default thread pool oversubscribe a small
# machine (PyPI's torch then takes ~300 ms for some 20 ms steps): one thread each.
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}

out="ddpscope-demo-$(date +%Y%m%d-%H%M%S)"
echo "== recording examples/ddp_train.py on 2 CPU ranks =="
"$build/ddpscope" record -o "$out" --nproc 2 -- \
  "$python" examples/ddp_train.py --iters 20 --bucket-cap-mb 1
echo
echo "== ddpscope report $out/run.db =="
"$build/ddpscope" report "$out/run.db"
echo
echo "demo: install $((installed - begin)) s, build $((built - installed)) s," \
  "record and report $(($(date +%s) - built)) s"
echo "files: $out/run.db (merged), $out/rank-*.db (per rank)"
echo "query: sqlite3 $out/run.db 'SELECT rank, seq, op, bytes FROM collectives LIMIT 10'"
