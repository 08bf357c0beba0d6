#!/usr/bin/env python3
"""Host cost of the Python start-up hook (DDP's own account) per DDP step.

Runs one training loop of a small DDP model (1 rank, Gloo, CPU) under the
injector twice over, interleaved: with the start-up hook (what `record` does)
and without it (DDPSCOPE_PYTHON=0, the injector still preloaded), and prints
the median step time of each and the difference. Each step is one DDP forward
(two regions: pre- and post-forward), a backward and one user all-reduce of
one element (a loss for logging: one user region). The model is tiny so the
hook's own cost is not hidden in the compute. Target: under 100 us per step
(1 % of a 10 ms training step).

usage: bench/python_hook_overhead.py [--pairs N] [--steps N] [--python PY]
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


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(py, build, out_dir, steps, hook):
    env = dict(os.environ, RANK="0", WORLD_SIZE="1", MASTER_ADDR="127.0.0.1",
               MASTER_PORT=str(free_port()), OMP_NUM_THREADS="1",
               LD_PRELOAD=os.path.join(build, "libddpscope_inject.so"),
               DDPSCOPE_OUT=out_dir, DDPSCOPE_QUIET="1",
               DDPSCOPE_PYTHON="1" if hook else "0",
               PYTHONPATH=os.path.join(build, "python"))
    res = subprocess.run([py, "-c", CHILD, str(steps)], env=env, capture_output=True, text=True,
                         timeout=600)
    if res.returncode != 0:
        sys.exit(f"python_hook_overhead: the step loop failed: {res.stderr.strip()[-400:]}")
    times = json.loads(res.stdout.strip().splitlines()[-1])
    return statistics.median(times[len(times) // 10:]) / 1e3  # us, warm-up dropped


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--pairs", type=int, default=5)
    p.add_argument("--steps", type=int, default=2000)
    venv = os.path.join(ROOT, ".venv", "bin", "python")
    p.add_argument("--python", default=venv if os.path.exists(venv) else "/usr/bin/python3")
    a = p.parse_args()
    build = os.path.abspath(os.environ.get("DDPSCOPE_BUILD", os.path.join(ROOT, "build")))
    off, on = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(a.pairs):
            off.append(run(a.python, build, os.path.join(tmp, f"off{i}"), a.steps, False))
            on.append(run(a.python, build, os.path.join(tmp, f"on{i}"), a.steps, True))
    mo, mn = statistics.median(off), statistics.median(on)
    print(f"python: {a.python}; {a.pairs} pairs of {a.steps} steps (1 rank, Gloo, CPU)")
    print(f"step median without hook: {mo:.1f} us  (runs: {min(off):.1f} .. {max(off):.1f})")
    print(f"step median with hook:    {mn:.1f} us  (runs: {min(on):.1f} .. {max(on):.1f})")
    print(f"hook cost per step:       {mn - mo:+.1f} us  (target < 100 us)")


if __name__ == "__main__":
    main()
