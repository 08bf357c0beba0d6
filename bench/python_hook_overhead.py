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

With --fsdp: an FSDP2 model instead (3 fully_shard blocks and the root):
per step 4 forward and 3 backward all-gathers and 4 reduce-scatters (11
unit-phases), each a region, and the units' waits and the step's marks. It
runs in one process, recorded, on torch's fake process group of world size
2, whose collectives return at once: no network and no second rank to wait
for. The hook's wrappers are taken off and put back (their __wrapped__
originals) step by step, in groups of four steps: off, on, on, off. Both
variants share one process and its memory layout (between processes a
step's time moves by more than the hook costs), and a drift of this VM's
speed, which moves a block of steps by more than the hook costs, falls on
both alike. Steps are timed in the training thread's CPU time, which other
load on the machine moves little, and which is what the hook adds to a step
where a core is free for the injector's writer thread; the writer's added
CPU is printed apart. Printed: the median step with the wrappers less the
median without, per step and per unit-phase (target: at most 20 us), with
the quartiles of the groups' own differences, and the noise floor: the
same toggling with the wrappers on in both steps of a pair. The fake group keeps no
sequence numbers: the hook asks once per group and then knows, so it reads
one fewer number per collective than on a real group. With --fsdp --gloo:
2 real Gloo ranks, as for DDP: rank 0's step times, hook against no hook
(the job's slowdown; this VM's noise is larger than the hook). Needs a
torch with FSDP2.

To compare two builds' hooks, run it once per build (DDPSCOPE_BUILD), one
after the other, twice over.

With --user-calls: the added CPU of one torch.distributed call the job makes
outside DDP and FSDP (a loss all-reduced for logging), on the fake group, in
a hot loop: the hook's wrapper against the function it wraps, in blocks of 200
calls, off on on off.

usage: bench/python_hook_overhead.py [--pairs N] [--steps N] [--python PY] [--fsdp [--gloo]]
       --user-calls [--groups N]: one user collective's added cost
       --fsdp alone: [--groups N] groups of four steps (default 500)
       --fsdp --instructions [--steps N]: the same toggling under valgrind's
         callgrind, phases of N steps (say 20), off on on off, twice: the
         training thread's instructions, which this VM's speed does not move
       --fsdp --instructions --processes [--steps N]: the same count with
         nothing toggled, a process without the hook against one with it
       --fsdp [--instructions] --only c10d: only torch.distributed's wrappers
         toggled (the rest on): the cost of noting each collective
       --fsdp --calibrate: the same toggling with each wrapper replaced by a
         function of its parameters that only calls what it wraps: what the
         method itself measures for a frame a call
env:   DDPSCOPE_BUILD  build tree holding libddpscope_inject.so and python/ [build]
"""
import argparse
import json
import os
import shutil
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
import json, os, sys, time, torch, torch.distributed as dist, torch.nn as nn
# TOGGLED_STEPS
from torch.distributed.fsdp import fully_shard
clock, fake = time.perf_counter_ns, os.environ.get("BENCH_FAKE_PG") == "1"
if fake:
    from torch.testing._internal.distributed.fake_pg import FakeStore
    dist.init_process_group("fake", rank=0, world_size=2, store=FakeStore())
    clock = time.thread_time_ns  # the training thread's CPU time
else:
    dist.init_process_group("gloo")
torch.manual_seed(0)
model = nn.Sequential(*[nn.Linear(16, 16) for _ in range(3)], nn.Linear(16, 4))
for block in list(model)[:3]:
    fully_shard(block)
fully_shard(model)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x, times = torch.randn(8, 16), []


def step():
    model(x).sum().backward()
    opt.step()
    opt.zero_grad()


if fake and os.environ.get("BENCH_COUNTED") == "1":
    counted_phases(step, int(sys.argv[1]))
    print("[]")
elif fake and os.environ.get("BENCH_COUNTED") == "plain":
    counted_plain(step, int(sys.argv[1]))
    print("[]")
elif fake:
    groups = int(sys.argv[1])
    print(json.dumps([toggled_steps(step, groups), toggled_steps(step, groups, null=True)]))
else:
    for _ in range(int(sys.argv[1])):
        t0 = clock()
        step()
        times.append(clock() - t0)
    print(json.dumps(times))
dist.destroy_process_group()
"""

# The hook's wrappers on FSDP's classes and on torch.distributed, taken off
# (their originals, functools.wraps' __wrapped__) and put back step by step,
# in the order off, on, on, off (so a drift of the machine's speed falls on
# both alike); per step, the training thread's and the process's CPU.
TOGGLED_STEPS = r"""
_WRAPPERS = []


def hook_wrappers():
    # Once per process: with --calibrate the pass-throughs are then in place.
    if not _WRAPPERS:
        found = installed_wrappers()
        calibrate = os.environ.get("BENCH_CALIBRATE") == "1"
        _WRAPPERS.append([pass_through(w) for w in found] if calibrate else found)
    return _WRAPPERS[0]


def pass_through(wrapped):
    # (owner, name, wrapper, original) with the wrapper replaced by a function
    # of its parameters that only calls the original: a frame a call.
    import inspect
    owner, name, wrapper, original = wrapped
    static = isinstance(original, staticmethod)
    fn = wrapper.__func__ if static else wrapper
    params = list(inspect.signature(fn, follow_wrapped=False).parameters.values())
    text, call = [], []
    for i, p in enumerate(params):
        star = {p.VAR_POSITIONAL: "*", p.VAR_KEYWORD: "**"}.get(p.kind, "")
        if p.kind == p.KEYWORD_ONLY and (i == 0 or params[i - 1].kind not in
                                         (p.KEYWORD_ONLY, p.VAR_POSITIONAL)):
            text.append("*")
        text.append(star + p.name)
        if p.kind == p.POSITIONAL_ONLY and (i + 1 == len(params) or
                                            params[i + 1].kind != p.POSITIONAL_ONLY):
            text.append("/")
        call.append(f"{p.name}={p.name}" if p.kind == p.KEYWORD_ONLY else star + p.name)
    namespace = {}
    exec(f"def make(original):\n def {name}({', '.join(text)}):\n"
         f"  return original({', '.join(call)})\n return {name}", namespace)
    made = namespace["make"](original.__func__ if static else original)
    made.__defaults__, made.__kwdefaults__ = fn.__defaults__, fn.__kwdefaults__
    return owner, name, staticmethod(made) if static else made, original


def installed_wrappers():
    import torch.distributed.distributed_c10d as c10d
    from torch.distributed.fsdp._fully_shard import _fsdp_param_group, _fsdp_state
    patched = []
    only = set(filter(None, os.environ.get("BENCH_ONLY", "").split(",")))
    for owner in (c10d, dist, _fsdp_param_group.FSDPParamGroup, _fsdp_state.FSDPState):
        for name, f in list(vars(owner).items()):
            # _prefetch_unshard is a staticmethod: its function is the wrapper
            static = isinstance(f, staticmethod)
            fn = f.__func__ if static else f
            code = getattr(fn, "__code__", None)
            ours = code is not None and "ddpscope_ddp" in code.co_filename
            if only and ("c10d" if owner in (c10d, dist) else name) not in only:
                continue  # not toggled: on in every step
            if ours and hasattr(fn, "__wrapped__"):
                original = staticmethod(fn.__wrapped__) if static else fn.__wrapped__
                patched.append((owner, name, f, original))
    assert patched, "the hook is not installed"
    return patched


def set_wrappers(patched, on):
    for owner, name, wrapper, original in patched:
        setattr(owner, name, wrapper if on else original)


def toggled_steps(step, groups, null=False):
    # null: the wrappers stay on in the "off" steps too (the noise floor).
    try:  # a build whose hook kept events in Python hands them over at each step's start
        from ddpscope_ddp.fsdp_events import flush
    except ImportError:
        flush = lambda: None
    patched = hook_wrappers()
    def timed(on):
        set_wrappers(patched, on or null)
        p0, t0 = time.process_time_ns(), time.thread_time_ns()
        step()
        t1, p1 = time.thread_time_ns(), time.process_time_ns()
        return (t1 - t0) / 1e3, ((p1 - p0) - (t1 - t0)) / 1e3
    for on in (False, True, False, True):  # warm-up: both variants
        timed(on)
    flush()
    steps = [[timed(False), timed(True), timed(True), timed(False)] for _ in range(groups)]
    timed(True)  # the wrappers back on, for the next run
    return steps


def counted_phases(step, n):
    # Under callgrind (--zero-before=getppid --dump-before=getpgrp): phases of
    # n steps, off on on off, twice, each phase its own dump. The collector
    # is off and hashing fixed, so that a phase's count moves only with what
    # it runs.
    import gc
    patched = hook_wrappers()
    for on in (False, True, False, True):  # warm-up: both variants
        set_wrappers(patched, on)
        step()
    gc.collect()
    gc.disable()
    os.getppid()
    for on in (False, True, True, False) * 2:
        set_wrappers(patched, on)
        for _ in range(n):
            step()
        os.getpgrp()
    set_wrappers(patched, True)
    gc.enable()


def counted_plain(step, n):
    # Under callgrind, as counted_phases, with nothing toggled: two phases of
    # n steps, each its own dump; the hook is on or off for the whole process.
    import gc
    for _ in range(4):
        step()
    gc.collect()
    gc.disable()
    os.getppid()
    for _ in range(2):
        for _ in range(n):
            step()
        os.getpgrp()
    gc.enable()
"""


# The user's own collective (an all-reduce of one element on the fake group,
# outside DDP and FSDP): the hook's wrapper against the function it wraps
# (its __wrapped__), in blocks of `calls` calls, off on on off, in one process.
USER_CALLS_CHILD = r"""
import json, sys, time, torch, torch.distributed as dist
from torch.testing._internal.distributed.fake_pg import FakeStore
dist.init_process_group("fake", rank=0, world_size=2, store=FakeStore())
t, hooked = torch.ones(1), dist.all_reduce
original = getattr(hooked, "__wrapped__", None)
assert original is not None, "the hook is not installed"
def block(f, calls):
    t0 = time.thread_time_ns()
    for _ in range(calls):
        f(t)
    return (time.thread_time_ns() - t0) / calls / 1e3
groups, calls = int(sys.argv[1]), 200
for _ in range(4):  # warm-up: both
    block(original, calls), block(hooked, calls)
per_group, base = [], []
for _ in range(groups):
    a, b, c, d = block(original, calls), block(hooked, calls), block(hooked, calls), block(original, calls)
    per_group.append((b + c - a - d) / 2)
    base.append((a + d) / 2)
print(json.dumps([per_group, base]))
dist.destroy_process_group()
"""

# Per step: 4 forward and 3 backward all-gathers, 4 reduce-scatters.
FSDP_UNIT_PHASES = 11


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(py, build, out_dir, source, args, hook, nproc, fake=False, prefix=(), env_add=None):
    """Runs `source` on nproc ranks under the injector (each command after
    `prefix`); rank 0's last line, as JSON."""
    port, procs = str(free_port()), []
    for rank in range(nproc):
        env = dict(os.environ, RANK=str(rank), WORLD_SIZE=str(nproc), MASTER_ADDR="127.0.0.1",
                   MASTER_PORT=port, OMP_NUM_THREADS="1",
                   LD_PRELOAD=os.path.join(build, "libddpscope_inject.so"),
                   DDPSCOPE_OUT=out_dir, DDPSCOPE_QUIET="1",
                   DDPSCOPE_PYTHON="1" if hook else "0", BENCH_FAKE_PG="1" if fake else "0",
                   PYTHONPATH=os.path.join(build, "python"), **(env_add or {}))
        procs.append(subprocess.Popen([*prefix, py, "-c", source, *map(str, args)], env=env,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    outs = [p.communicate(timeout=1800) for p in procs]
    if any(p.returncode != 0 for p in procs):
        sys.exit(f"python_hook_overhead: the step loop failed: {outs[0][1].strip()[-400:]}")
    return json.loads(outs[0][0].strip().splitlines()[-1])


def run(py, build, out_dir, steps, hook, fsdp):
    """Rank 0's median step time (us, the first tenth dropped as warm-up)."""
    times = launch(py, build, out_dir, FSDP_CHILD if fsdp else CHILD, [steps], hook,
                   2 if fsdp else 1)
    return statistics.median(times[len(times) // 10:]) / 1e3


def median_and_quartiles(xs):
    """Of the groups' own differences (group_differences): each group is its
    own comparison, so a slow drift of the VM's speed across the run cancels
    in their median, not in the medians of all steps."""
    q = statistics.quantiles(xs, n=4)
    return f"median {q[1]:+.1f}, quartiles {q[0]:+.1f} .. {q[2]:+.1f}"


def added_per_step(steps, field=0):
    """The median step with the wrappers less the median without (field 0:
    the training thread's CPU, 1: the rest of the process's), in us."""
    off = [s[field] for g in steps for s in (g[0], g[3])]
    on = [s[field] for g in steps for s in (g[1], g[2])]
    return statistics.median(on) - statistics.median(off)


def group_differences(steps):
    """Each group's own difference: its two steps with the wrappers less its
    two without, halved (us a step)."""
    return [(g[1][0] + g[2][0] - g[0][0] - g[3][0]) / 2 for g in steps]


def fsdp_toggled(py, build, groups):
    """The fake group's run: the hook's added CPU per step, from the median
    step with it and without it, and the spread over groups of four steps;
    beside it the noise floor (the same toggling with the wrappers on in
    both)."""
    source = FSDP_CHILD.replace("# TOGGLED_STEPS", TOGGLED_STEPS)
    with tempfile.TemporaryDirectory() as tmp:
        steps, null = launch(py, build, os.path.join(tmp, "run"), source, [groups], True, 1,
                             fake=True)
    added = added_per_step(steps)
    per_group, null_per_group = group_differences(steps), group_differences(null)
    base = statistics.median(s[0] for g in steps for s in (g[0], g[3]))
    print(f"python: {py}; {groups} groups of 4 steps, off on on off (FSDP2, "
          f"{FSDP_UNIT_PHASES} unit-phases a step, fake group, CPU, one recorded process)")
    print(f"training thread's CPU per step without the wrappers: {base:.1f} us")
    per_phase = [x / FSDP_UNIT_PHASES for x in per_group]
    print(f"hook cost per step:       {added:+.1f} us  "
          f"(groups' {median_and_quartiles(per_group)})")
    print(f"hook cost per unit-phase: {added / FSDP_UNIT_PHASES:+.1f} us  "
          f"(groups' {median_and_quartiles(per_phase)}; target <= 20 us)")
    print(f"noise floor (wrappers on in both):  {added_per_step(null):+.1f} us a step  "
          f"(groups' {median_and_quartiles(null_per_group)})")
    print(f"the injector's writer, CPU per step beside: {added_per_step(steps, 1):+.1f} us")


def callgrind_counts(py, build, steps, hook, mode, phases):
    """The training thread's instructions per step of each phase, counted by
    callgrind in one recorded process on the fake group (BENCH_COUNTED=mode:
    counted_phases or counted_plain). Address randomisation off where
    setarch is (hashes are fixed by PYTHONHASHSEED), so that two processes lay
    out their objects alike."""
    if shutil.which("valgrind") is None:
        sys.exit("python_hook_overhead: --instructions needs valgrind (callgrind) on PATH")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "callgrind.out")
        prefix = ["setarch", "-R"] if shutil.which("setarch") else []
        prefix += ["valgrind", "--tool=callgrind", "--separate-threads=yes",
                   "--zero-before=getppid", "--dump-before=getpgrp",
                   f"--callgrind-out-file={out}"]
        source = FSDP_CHILD.replace("# TOGGLED_STEPS", TOGGLED_STEPS)
        launch(py, build, os.path.join(tmp, "run"), source, [steps], hook, 1, fake=True,
               prefix=prefix, env_add={"BENCH_COUNTED": mode, "PYTHONHASHSEED": "0"})
        counts = []
        for part in range(1, phases + 1):  # thread 1, the training thread
            with open(f"{out}.{part}-01") as f:
                counts.append(next(int(l.split()[1]) for l in f if l.startswith("summary:")))
    return [c / steps for c in counts]


def fsdp_counted(py, build, steps):
    """The hook's added instructions per step, counted by callgrind in the
    training thread: phases of `steps` steps, off on on off, twice, in one
    recorded process on the fake group. A count, unlike a time, does not move
    with this VM's speed, so two builds compare to the instruction; it does
    not weigh cache misses, which a time does."""
    per_step = callgrind_counts(py, build, steps, True, "1", 8)
    added = [(per_step[i + 1] + per_step[i + 2] - per_step[i] - per_step[i + 3]) / 2
             for i in (0, 4)]
    off = statistics.mean(per_step[i] for i in (0, 3, 4, 7))
    print(f"python: {py}; callgrind, 2 x (off on on off) phases of {steps} steps (FSDP2, "
          f"{FSDP_UNIT_PHASES} unit-phases a step, fake group, one recorded process)")
    print(f"training thread's instructions per step without the wrappers: {off:,.0f}")
    mean = statistics.mean(added)
    print(f"hook's instructions per step:       {mean:+,.0f}  (the two rounds: "
          f"{added[0]:+,.0f}, {added[1]:+,.0f})")
    print(f"hook's instructions per unit-phase: {mean / FSDP_UNIT_PHASES:+,.0f}")


def fsdp_counted_processes(py, build, steps):
    """The same count with nothing toggled: one process without the hook
    (DDPSCOPE_PYTHON=0, the injector still preloaded), one with it, two
    phases of `steps` steps each. Setting a class's attribute (the toggling)
    resets what the interpreter has specialised on it; here nothing is reset,
    so this shows whether the toggled count carries that cost too."""
    off = callgrind_counts(py, build, steps, False, "plain", 2)
    on = callgrind_counts(py, build, steps, True, "plain", 2)
    added = [b - a for a, b in zip(off, on)]
    print(f"python: {py}; callgrind, 2 phases of {steps} steps in each of two processes, "
          f"without and with the hook (FSDP2, {FSDP_UNIT_PHASES} unit-phases a step, fake group)")
    print(f"training thread's instructions per step without the hook: "
          f"{off[0]:,.0f}, {off[1]:,.0f}; with it: {on[0]:,.0f}, {on[1]:,.0f}")
    mean = statistics.mean(added)
    print(f"hook's instructions per step:       {mean:+,.0f}  (the two phases: "
          f"{added[0]:+,.0f}, {added[1]:+,.0f})")
    print(f"hook's instructions per unit-phase: {mean / FSDP_UNIT_PHASES:+,.0f}")


def user_calls(py, build, groups):
    """The hook's added CPU per user collective: blocks of 200 calls with the
    wrapper and without, off on on off; the median of the groups' own
    differences. A hot loop: in a training step, where the hook's code and
    data are cold, a call costs more (--fsdp's toggling of a whole step)."""
    with tempfile.TemporaryDirectory() as tmp:
        per_group, base = launch(py, build, os.path.join(tmp, "run"), USER_CALLS_CHILD, [groups],
                                 True, 1, fake=True)
    print(f"python: {py}; {groups} groups of 4 blocks of 200 user all-reduces, off on on off "
          "(fake group, CPU, one recorded process)")
    print(f"a user all-reduce without the hook: {statistics.median(base):.2f} us")
    print(f"hook cost per user collective: {median_and_quartiles(per_group)} us")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--pairs", type=int, default=5)
    p.add_argument("--steps", type=int, default=2000)
    p.add_argument("--groups", type=int, default=500,
                   help="--fsdp alone: groups of four steps (off, on, on, off)")
    venv = os.path.join(ROOT, ".venv", "bin", "python")
    p.add_argument("--python", default=venv if os.path.exists(venv) else "/usr/bin/python3")
    p.add_argument("--fsdp", action="store_true", help="an FSDP2 model on a fake group")
    p.add_argument("--gloo", action="store_true", help="with --fsdp: on 2 Gloo ranks")
    p.add_argument("--instructions", action="store_true",
                   help="with --fsdp: count instructions under valgrind instead (--steps a phase)")
    p.add_argument("--processes", action="store_true",
                   help="with --fsdp --instructions: a process without the hook and one with it")
    p.add_argument("--only", default="",
                   help="with --fsdp (toggled): toggle only these wrappers, comma-separated: c10d "
                   "(torch.distributed's) or FSDP's method names (unshard, wait_for_unshard, "
                   "post_backward, _prefetch_unshard, _root_pre_forward, "
                   "_root_post_backward_final_callback); the others stay on. Toggling unshard "
                   "or post_backward without c10d leaves the collective a user call: only the "
                   "others split the cost cleanly")
    p.add_argument("--calibrate", action="store_true",
                   help="with --fsdp (toggled): pass-through wrappers of the same parameters "
                   "instead of the hook's: the method's own floor")
    p.add_argument("--user-calls", action="store_true",
                   help="the added cost of one user collective (outside DDP and FSDP), "
                   "--groups groups of blocks")
    a = p.parse_args()
    if a.only:
        os.environ["BENCH_ONLY"] = a.only  # the child's environment (launch)
        print(f"only these wrappers toggled, the others on in every step: {a.only}")
    if a.calibrate:
        os.environ["BENCH_CALIBRATE"] = "1"  # the child's environment (launch)
        print("calibration: each wrapper a pass-through of the same parameters")
    build = os.path.abspath(os.environ.get("DDPSCOPE_BUILD", os.path.join(ROOT, "build")))
    if a.user_calls:
        return user_calls(a.python, build, a.groups)
    if a.fsdp and a.instructions:
        counted = fsdp_counted_processes if a.processes else fsdp_counted
        return counted(a.python, build, a.steps)
    if a.fsdp and not a.gloo:
        return fsdp_toggled(a.python, build, a.groups)
    off, on = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(a.pairs):
            off.append(run(a.python, build, os.path.join(tmp, f"off{i}"), a.steps, False, a.fsdp))
            on.append(run(a.python, build, os.path.join(tmp, f"on{i}"), a.steps, True, a.fsdp))
    mo, mn = statistics.median(off), statistics.median(on)
    job = "FSDP2, 11 unit-phases a step, 2 Gloo ranks" if a.fsdp else "DDP, 1 rank, Gloo"
    print(f"python: {a.python}; {a.pairs} pairs of {a.steps} steps ({job}, CPU)")
    print(f"step median without hook: {mo:.1f} us  (runs: {min(off):.1f} .. {max(off):.1f})")
    print(f"step median with hook:    {mn:.1f} us  (runs: {min(on):.1f} .. {max(on):.1f})")
    pairs = [b - a_ for a_, b in zip(off, on)]
    print(f"hook cost per step:       {mn - mo:+.1f} us  (pairs {min(pairs):+.1f} .. "
          f"{max(pairs):+.1f}{'' if a.fsdp else '; target < 100 us'})")


if __name__ == "__main__":
    main()
