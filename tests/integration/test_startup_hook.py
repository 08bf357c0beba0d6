#!/usr/bin/env python3
"""The Python start-up hook that gives the analysis DDP's own account.

It must be invisible to the job: a sitecustomize the hook shadows (the
user's, or Debian's) still runs, once; a job that never imports torch does not
get it imported; `--no-python-hook` falls back to the all-reduce pattern and
the report says so. With the hook, a plain DDP job's buckets are DDP's own
rebuilt_bucket_sizes and the report says they came from DDP. The hook's
builtins (injector/ddp/fsdp_builtins.cpp, region_builtins.cpp), called as
the hook calls them, return or raise what the call does and note exactly the
regions they should.
"""
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_ddp_record import EXAMPLE, JOB_ENV, PY, DDPSCOPE, record  # noqa: E402


def report_json(run_dir):
    out = os.path.join(run_dir, "report.json")
    subprocess.run([DDPSCOPE, "report", os.path.join(run_dir, "run.db"), "--json", out],
                   check=True, capture_output=True, timeout=300)
    with open(out) as f:
        return json.load(f)


def ddp_log(log_dir, rank):
    with open(os.path.join(log_dir, f"ddp-rank{rank}.json")) as f:
        return json.load(f)


class StartupHook(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def test_shadowed_sitecustomize_still_runs_once(self):
        theirs = os.path.join(self.dir, "theirs")
        os.makedirs(theirs)
        with open(os.path.join(theirs, "sitecustomize.py"), "w") as f:
            f.write("import builtins\nbuiltins.THEIR_SITE_RUNS = "
                    "getattr(builtins, 'THEIR_SITE_RUNS', 0) + 1\n")
        script = ("import builtins, sys, socket\n"
                  "print('runs', getattr(builtins, 'THEIR_SITE_RUNS', 0))\n"
                  "print('torch imported', 'torch' in sys.modules)\n")
        env = dict(JOB_ENV, PYTHONPATH=theirs)
        res = subprocess.run([DDPSCOPE, "record", "-o", os.path.join(self.dir, "rec"), "--", PY,
                              "-c", script], capture_output=True, text=True, env=env, timeout=120)
        self.assertEqual(res.returncode, 0, res.stderr)
        self.assertIn("runs 1", res.stdout)
        self.assertIn("torch imported False", res.stdout)

    def test_fsdp_builtins_note_and_pass_through(self):
        # No torch: a group is any object with torch's sequence-number method.
        script = r"""
from ddpscope_ddp import fsdp_events as ev, native
class Group:
    n = 0
    def _get_sequence_number_for_group(self):
        return self.n
class Unnumbered:  # torch's fake group: asking raises
    def _get_sequence_number_for_group(self):
        raise RuntimeError("no numbers")
class Boom(Exception):
    pass
pg, fake, none = Group(), Unnumbered(), lambda: None
print(id(pg))
def op(tensor, group=None, async_op=False):
    pg.n += 1
    return ("done", tensor)
def bad(tensor, group=None):
    raise Boom("inside")
# unit 3's forward all-gather, prefetched and async: group by keyword
print(ev.collective((3, 0, 1), 2, 1, none, op, ("a",), {"group": pg, "async_op": True}))
# unit 4's post-backward (phase None: the op's reduction), group by position
print(ev.collective((4, None, 0), 2, 1, none, op, ("b", pg), {}))
try:
    ev.collective((5, 1, 0), 2, 1, none, bad, ("c",), {"group": pg})
except Boom as e:
    print("raised", e)
ev.collective((6, 0, 0), 2, 1, none, op, ("d",), {"group": fake})
ev.collective((6, 0, 0), 2, 1, none, op, ("d",), {"group": fake})  # the remembered way
print(ev.collective((7, 0, 0), 2, 1, none, op, ("e",), {}))  # no group at all: only the call
native._local.stack.append(native.Region(native.USER, -1, pg))
print(ev.collective((8, 0, 0), 2, 1, none, op, ("f",), {"group": pg}))  # another region's
native._local.stack.pop()
print(ev.mark(4, 3, 77, ev.clock()), ev.mark("not a kind", 3, 0, 0))
"""
        out = os.path.join(self.dir, "rec")
        res = subprocess.run([DDPSCOPE, "record", "-o", out, "--", PY, "-c", script],
                             capture_output=True, text=True, env=JOB_ENV, timeout=120)
        self.assertEqual(res.returncode, 0, res.stderr)
        lines = res.stdout.splitlines()
        self.assertEqual(lines[1:], [
            "('done', 'a')", "('done', 'b')", "raised inside", "('done', 'e')", "('done', 'f')",
            "None None"])
        with sqlite3.connect(os.path.join(out, "run.db")) as db:
            rows = db.execute("SELECT unit, kind, seq_begin, seq_end, flags, start_ns <= end_ns "
                              "FROM fsdp_regions ORDER BY start_ns").fetchall()
            pg_keys = db.execute("SELECT pg_key FROM fsdp_regions WHERE unit IN (3, 4) "
                                 "ORDER BY start_ns").fetchall()
        self.assertEqual(rows, [
            (3, "forward_all_gather", 0, 1, 1 | 2, 1),  # prefetch | async
            (4, "reduce_scatter", 1, 2, 0, 1),
            (5, "backward_all_gather", -1, -1, 0, 1),  # raised: no collective named
            (6, "forward_all_gather", -1, -1, 0, 1),
            (6, "forward_all_gather", -1, -1, 0, 1),
            (3, "wait", -1, -1, 0, 1)])
        self.assertEqual(pg_keys, [(int(lines[0]),), (int(lines[0]),), (77,)])  # id(pg), the mark's

    def test_user_call_notes_and_passes_through(self):
        # The region builtins (injector/ddp/region_builtins.cpp), no torch: a
        # user's collective is one region with its group's numbers around it;
        # one that issued nothing, one inside another region, one with no
        # group are only calls; one that raised is noted and raises as it did.
        script = r"""
from ddpscope_ddp import native
assert native.user_call is not None, "no region builtins"
class Group:
    n = 0
    def _get_sequence_number_for_group(self):
        return self.n
class Unnumbered:
    n = 0
    def _get_sequence_number_for_group(self):
        raise RuntimeError("no numbers")
class Boom(Exception):
    pass
pg, other, fake = Group(), Group(), Unnumbered()
print(id(pg), id(other))
def op(tensor, group=None, async_op=False):
    (group or other).n += 1
    return ("done", tensor)
def idle(tensor, group=None):
    return "idle"
def bad(tensor, group=None):
    group.n += 1
    raise Boom("inside")
def nested(tensor, group=None):  # an alias calling its new name: one region
    return native.user_call(1, lambda: other, op, (tensor,), {"group": group})
call, default = native.user_call, lambda: other
print(call(1, default, op, ("a",), {"group": pg, "async_op": True}))  # by keyword
print(call(1, default, op, ("b", pg), None))                          # by position
print(call(1, default, op, ("c",), {}))                               # the default group
print(call(1, default, idle, ("d", pg), {}))                          # issued nothing
try:
    call(1, default, bad, ("e",), {"group": pg})
except Boom as e:
    print("raised", e)
print(call(1, default, op, ("f",), {"group": fake}))                  # no numbers
print(call(1, lambda: None, op, ("g",), {}))                          # no group at all
print(call(1, default, nested, ("h", pg), None))
with native.Region(native.USER, -1, pg):
    print(call(1, default, op, ("i",), {"group": pg}))                # the region's own
"""
        out = os.path.join(self.dir, "rec")
        res = subprocess.run([DDPSCOPE, "record", "-o", out, "--", PY, "-c", script],
                             capture_output=True, text=True, env=JOB_ENV, timeout=120)
        self.assertEqual(res.returncode, 0, res.stderr)
        lines = res.stdout.splitlines()
        self.assertEqual(lines[1:], [
            "('done', 'a')", "('done', 'b')", "('done', 'c')", "idle", "raised inside",
            "('done', 'f')", "('done', 'g')", "('done', 'h')", "('done', 'i')"])
        pg, other = (int(x) for x in lines[0].split())
        with sqlite3.connect(os.path.join(out, "run.db")) as db:
            rows = db.execute("SELECT kind, instance, bucket, pg_key, seq_begin, seq_end, flags, "
                              "start_ns <= end_ns FROM ddp_regions ORDER BY start_ns").fetchall()
        user = lambda key, begin, end: ("user", -1, -1, key, begin, end, 0, 1)
        self.assertEqual(rows, [
            user(pg, 0, 1), user(pg, 1, 2), user(other, 0, 1),  # a, b, c
            user(pg, 2, 3),                                     # e: raised after issuing
            rows[4],                                            # f: its key, checked below
            user(pg, 3, 4),                                     # h: once, not twice
            user(pg, 4, 5)])                                    # the Region around i
        self.assertEqual(rows[4][4:], (-1, -1, 0, 1))

    def test_fsdp_wrappers_take_fsdps_own_parameters(self):
        # Each FSDP wrapper has its method's parameters (no *args/**kwargs on
        # the hot path); a method of another shape is left as it is, with a
        # notice, and still called with what the caller gave.
        script = r"""
import inspect
from ddpscope_ddp import fsdp_patches as fp
class Group:
    def unshard(self, async_op=False, extra=None):  # not torch's shape
        return ("unshard", async_op, extra)
    def wait_for_unshard(self):  # torch's shape
        return "waited"
Group.unshard = fp._follow_unshard(Group.unshard)
Group.wait_for_unshard = fp._follow_wait(Group.wait_for_unshard)
g = Group()
print(g.unshard(extra=1), g.wait_for_unshard())
print(hasattr(Group.unshard, "__wrapped__"), hasattr(Group.wait_for_unshard, "__wrapped__"))
try:
    from torch.distributed.fsdp._fully_shard import _fsdp_param_group as pg, _fsdp_state as st
except Exception:  # torch 1.13: none (Debian's raises ValueError importing it)
    print("no FSDP2")
else:
    for cls, name in [(pg.FSDPParamGroup, "unshard"), (pg.FSDPParamGroup, "wait_for_unshard"),
                      (pg.FSDPParamGroup, "post_backward"), (st.FSDPState, "_root_pre_forward"),
                      (st.FSDPState, "_root_post_backward_final_callback")]:
        f = getattr(cls, name)
        same = inspect.signature(f, follow_wrapped=False) == inspect.signature(f.__wrapped__)
        print(name, "followed", same)
    f = pg.FSDPParamGroup.__dict__["_prefetch_unshard"].__func__
    print("_prefetch_unshard followed", hasattr(f, "__wrapped__"))
"""
        out = os.path.join(self.dir, "rec")
        env = dict(JOB_ENV, DDPSCOPE_QUIET="0")
        res = subprocess.run([DDPSCOPE, "record", "-o", out, "--", PY, "-c", script],
                             capture_output=True, text=True, env=env, timeout=120)
        self.assertEqual(res.returncode, 0, res.stderr)
        lines = res.stdout.splitlines()
        self.assertEqual(lines[:2], ["('unshard', False, 1) waited", "False True"])
        self.assertIn("FSDP's Group.unshard is not as torch 2.11-2.15 have it: not followed",
                      res.stderr)
        if lines[2] != "no FSDP2":
            self.assertEqual(lines[2:], [
                "unshard followed True", "wait_for_unshard followed True",
                "post_backward followed True", "_root_pre_forward followed True",
                "_root_post_backward_final_callback followed True",
                "_prefetch_unshard followed True"])

    def test_collectives_keep_their_parameters(self):
        # torch.distributed's collectives, followed, take torch's own
        # parameters (no *args/**kwargs on the path of every FSDP
        # collective) and pass positional, keyword and default arguments on
        # as torch's would; each call is the user's.
        script = r"""
import inspect, torch, torch.distributed as dist
dist.init_process_group("gloo")
names = [n for n in ("all_reduce", "broadcast", "all_gather", "all_gather_into_tensor",
                     "reduce_scatter_tensor", "all_gather_single", "reduce_scatter_single",
                     "barrier") if hasattr(dist, n)]
fns = [getattr(dist, n) for n in names]
print(all(inspect.signature(f, follow_wrapped=False) == inspect.signature(f.__wrapped__)
          for f in fns),
      all(f.__code__.co_filename.endswith(f"c10d_patches.{n}.py") for n, f in zip(names, fns)))
t = torch.arange(4.)
dist.all_reduce(t)
dist.all_reduce(t, dist.ReduceOp.MAX)
dist.all_reduce(tensor=t, op=dist.ReduceOp.SUM, group=None, async_op=True).wait()
out = [torch.empty(4)]
dist.all_gather(out, t)
dist.broadcast(t, src=0)
print(t.tolist(), out[0].tolist())
# A collective of *args and **kwargs (a third party's, say): the general wrapper.
from ddpscope_ddp import c10d_patches
plain = dist.all_reduce.__wrapped__
def any_shape(*args, **kwargs):
    return plain(*args, **kwargs)
followed = c10d_patches._follow_user_call(dist.distributed_c10d, "all_reduce", any_shape)
print(followed.__code__.co_filename.endswith("c10d_patches.py"), followed(t, async_op=True).wait())
"""
        out = os.path.join(self.dir, "rec")
        res = record(out, 1, [PY, "-c", script])
        self.assertEqual(res.stdout.splitlines(),
                         ["True True", "[0.0, 1.0, 2.0, 3.0] [0.0, 1.0, 2.0, 3.0]", "True True"])
        roles = {r["role"]: r["calls"] for r in report_json(out)["roles"]}
        self.assertEqual(roles, {"user": 6})

    def test_a_job_without_ddp_has_its_own_calls_and_no_buckets(self):
        # Gradients all-reduced by hand, a loss logged, no DDP: every
        # collective is the user's, and no DDP bucket is made up from their
        # repeating sizes (as a job recorded without the hook gets).
        script = r"""
import torch, torch.distributed as dist
dist.init_process_group("gloo")
grads = [torch.ones(1000), torch.ones(300)]
for step in range(6):
    for g in grads:
        dist.all_reduce(g)
    dist.all_reduce(torch.tensor([float(step)]))
dist.barrier()
"""
        out = os.path.join(self.dir, "rec")
        record(out, 2, [PY, "-c", script])
        rep = report_json(out)
        self.assertEqual({r["role"]: r["calls"] for r in rep["roles"]}, {"user": 2 * 19})
        self.assertEqual((rep["ddp"], rep["buckets"]), ([], []))
        text = subprocess.run([DDPSCOPE, "report", os.path.join(out, "run.db")],
                              capture_output=True, text=True, timeout=300).stdout
        self.assertNotIn("DDP 0", text)
        self.assertNotIn("buckets from the all-reduce pattern", text)
        self.assertIn("collectives by role: user 38", text)

    def test_the_users_group_beside_ddps(self):
        # A loss logged on a group of its own, beside DDP's: the calls on it
        # are the user's (tied by their own regions; DDP's constructor never
        # ran on that group).
        script = r"""
import torch, torch.distributed as dist, torch.nn as nn
dist.init_process_group("gloo")
log = dist.new_group(backend="gloo")
torch.manual_seed(0)
model = nn.parallel.DistributedDataParallel(nn.Linear(50, 50))
for step in range(4):
    model(torch.randn(4, 50)).sum().backward()
    dist.all_reduce(torch.tensor([1.0]), group=log)
"""
        out = os.path.join(self.dir, "rec")
        record(out, 2, [PY, "-c", script])
        roles = {r["role"]: r["calls"] for r in report_json(out)["roles"]}
        self.assertEqual((roles.get("ddp_bucket"), roles.get("user")), (2 * 4, 2 * 4), roles)
        self.assertNotIn("unknown", roles)

    def test_buckets_from_ddp_and_from_the_pattern(self):
        args = ["--iters", "5", "--layers", "4", "--width", "128", "--bucket-cap-mb", "0.1"]
        log = os.path.join(self.dir, "log")
        with_hook = os.path.join(self.dir, "hook")
        record(with_hook, 2, [PY, EXAMPLE, "--ddp-log", log] + args)
        without = os.path.join(self.dir, "nohook")
        res = subprocess.run([DDPSCOPE, "record", "-o", without, "--nproc", "2",
                              "--no-python-hook", "--", PY, EXAMPLE] + args,
                             capture_output=True, text=True, env=JOB_ENV, timeout=300)
        self.assertEqual(res.returncode, 0, res.stderr)

        rebuilt = ddp_log(log, 0)["rebuilt_bucket_sizes"]
        hooked = report_json(with_hook)
        self.assertEqual([d["buckets_from"] for d in hooked["ddp"]], ["ddp"])
        self.assertEqual(hooked["ddp"][0]["bucket_bytes"], rebuilt)
        self.assertEqual(sorted(b["bytes"] for b in hooked["buckets"]), sorted(rebuilt))
        self.assertEqual([r["iterations"] for r in hooked["ranks"]], [5, 5])
        roles = {r["role"]: r["calls"] for r in hooked["roles"]}
        # Per rank, the example's own final loss all-reduce and shutdown barrier.
        self.assertEqual(roles.get("user"), 4, roles)
        self.assertNotIn("unknown", roles)

        plain = report_json(without)
        self.assertEqual([d["buckets_from"] for d in plain["ddp"]], ["pattern"])
        self.assertEqual(plain["ddp"][0]["bucket_bytes"], rebuilt)


if __name__ == "__main__":
    unittest.main()
