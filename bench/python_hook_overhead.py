#!/usr/bin/env python3
"""Host cost of the Python start-up hook (DDP's or FSDP2's own account) per step.

Runs one training loop of a small DDP model (1 rank, Gloo, CPU) under the
injector twice over, interleaved: with the start-up hook (what `record` does)
and without it (DDPSCOPE_PYTHON=0, the injector still preloaded), and prints
the median step time of each and the difference. Each step is one DDP forward
(two regions: pre- and post-forward), a backward and one user all-reduce of
one element (a loss for logging: one user region). The model is tiny so the
hook's own cost is not hidden in the compute. Target: under 100 us per step
(1 % of a 10 ms training step).

With --fsdp: an FSDP2 model instead (3 fully_shard blocks and the root) on
2 ranks (FSDP2 issues no collective on one): per step 4 forward and 3
backward all-gathers and 4 reduce-scatters, each a region, and the units'
waits and the step's marks; rank 0's step times. Needs a torch with FSDP2.

usage: bench/python_hook_overhead.py [--pairs N] [--steps N] [--python PY] [--fsdp]
env:   DDPSCOPE_BUILD  build tree holding libddpscope_inject.so and python/ [build]
"""
import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CHILD = r"""
import json, sys, time, torch, torch.distributed as dist, torch.nn as nn
dist.init_process_group("gloo")
torch.manual_seed(0)
model = nn.parallel.DistributedDataParallel(nn.Sequential(nn.Linear(16, 16), nn.Linear(16, 4)))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x, times = torch.randn(8, 16), []
for _ in range(int(sys.argv[1])):
    t0 = time.perf_counter_ns()
    loss = model(x).sum()
    loss.backward()
    opt.step()
    opt.zero_grad()
    logged = loss.detach().clone()
    dist.all_reduce(logged)
    times.append(time.perf_counter_ns() - t0)
dist.destroy_process_group()
print(json.dumps(times))
"""


FSDP_CHILD = r"""
import json, sys, time, torch, torch.distributed as dist, torch.nn as nn
from torch.distributed.fsdp import fully_shard
dist.init_process_group("gloo")
torch.manual_seed(0)
model = nn.Sequential(*[nn.Linear(16, 16) for _ in range(3)], nn.Linear(16, 4))
for block in list(model)[:3]:
    fully_shard(block)
fully_shard(model)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x, times = torch.randn(8, 16), []
for _ in range(int(sys.argv[1])):
    t0 = time.perf_counter_ns()
    model(x).sum().backward()
    opt.step()
    opt.zero_grad()
    times.append(time.perf_counter_ns() - t0)
dist.destroy_process_group()
print(json.dumps(times))
"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(py, build, out_dir, steps, hook, fsdp):
    """Rank 0's median step time (us, the first tenth dropped as warm-up)."""
    nproc, port = (2 if fsdp else 1), str(free_port())
    procs = []
    for rank in range(nproc):
        env = dict(os.environ, RANK=str(rank), WORLD_SIZE=str(nproc), MASTER_ADDR="127.0.0.1",
                   MASTER_PORT=port, OMP_NUM_THREADS="1",
                   LD_PRELOAD=os.path.join(build, "libddpscope_inject.so"),
                   DDPSCOPE_OUT=out_dir, DDPSCOPE_QUIET="1",
                   DDPSCOPE_PYTHON="1" if hook else "0",
                   PYTHONPATH=os.path.join(build, "python"))
        procs.append(subprocess.Popen([py, "-c", FSDP_CHILD if fsdp else CHILD, str(steps)],
                                      env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      text=True))
    outs = [p.communicate(timeout=600) for p in procs]
    if any(p.returncode != 0 for p in procs):
        sys.exit(f"python_hook_overhead: the step loop failed: {outs[0][1].strip()[-400:]}")
    times = json.loads(outs[0][0].strip().splitlines()[-1])
    return statistics.median(times[len(times) // 10:]) / 1e3


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--pairs", type=int, default=5)
    p.add_argument("--steps", type=int, default=2000)
    venv = os.path.join(ROOT, ".venv", "bin", "python")
    p.add_argument("--python", default=venv if os.path.exists(venv) else "/usr/bin/python3")
    p.add_argument("--fsdp", action="store_true", help="an FSDP2 model on 2 ranks")
    a = p.parse_args()
    build = os.path.abspath(os.environ.get("DDPSCOPE_BUILD", os.path.join(ROOT, "build")))
    off, on = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(a.pairs):
            off.append(run(a.python, build, os.path.join(tmp, f"off{i}"), a.steps, False, a.fsdp))
            on.append(run(a.python, build, os.path.join(tmp, f"on{i}"), a.steps, True, a.fsdp))
    mo, mn = statistics.median(off), statistics.median(on)
    job = "FSDP2, 11 collectives a step, 2 ranks" if a.fsdp else "DDP, 1 rank"
    print(f"python: {a.python}; {a.pairs} pairs of {a.steps} steps ({job}, Gloo, CPU)")
    print(f"step median without hook: {mo:.1f} us  (runs: {min(off):.1f} .. {max(off):.1f})")
    print(f"step median with hook:    {mn:.1f} us  (runs: {min(on):.1f} .. {max(on):.1f})")
    print(f"hook cost per step:       {mn - mo:+.1f} us  (target < 100 us)")


if __name__ == "__main__":
    main()
