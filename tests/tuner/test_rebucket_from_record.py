#!/usr/bin/env python3
"""Re-bucketing a recorded DDP run gives the buckets DDP itself builds.

A 2-rank Gloo DDP job (rebucket_job.py) is recorded with `ddpscope record` at
bucket_cap_mb=RECORDED_CAP. `ddpscope tune --dry-run` on its run.db plans
RECORDED_CAP and two other caps; DDP itself is then run at each of those caps
(one process: DDP rebuilds at world size 1 too) and its own account of its
buckets must equal the plan's bucket bytes exactly, in reduction order:
rebuilt_bucket_sizes for a DDP that rebuilds, bucket_sizes (the constructor's
layout) for one with find_unused_parameters, which never rebuilds.

The caps are chosen so that the layouts differ from cap to cap, and so that
on torch 2.x the first-bucket rule matters (there an explicit bucket_cap_mb
caps the first bucket too; torch 1.13 keeps it at 1 MiB): the test checks
both. The run must hold DDP's own account (ddp_info, written by record's
Python start-up hook): without it the test fails. Run by each torch Python of
tests/torch_pythons.cmake; the ranks run under the same Python.
"""
import json
import os
import socket
import sqlite3
import subprocess
import sys
import tempfile
import unittest

import torch
import torch.distributed as dist

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DDPSCOPE = os.environ.get("DDPSCOPE_BIN", os.path.join(ROOT, "build", "ddpscope"))
JOB = os.path.join(HERE, "rebucket_job.py")
PY = sys.executable
RECORDED_CAP = 1.5
OTHER_CAPS = [0.5, 2.5]
# One intra-op thread per rank: two ranks of torch's default pool oversubscribe a small machine.
JOB_ENV = dict(os.environ, OMP_NUM_THREADS="1")


def run(argv, **kw):
    return subprocess.run(argv, capture_output=True, text=True, timeout=300, env=JOB_ENV, **kw)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def ddp_layout(directory, cap, find_unused):
    """DDP's own account of its buckets at `cap`, one process, without ddpscope."""
    out = os.path.join(directory, "layout-%g.json" % cap)
    env = dict(JOB_ENV, RANK="0", WORLD_SIZE="1", MASTER_ADDR="127.0.0.1",
               MASTER_PORT=str(free_port()))
    argv = [PY, JOB, "--cap", repr(cap), "--layout-out", out] + (["--find-unused"] if find_unused else [])
    res = subprocess.run(argv, capture_output=True, text=True, timeout=300, env=env)
    if res.returncode != 0:
        raise AssertionError("DDP at cap %g failed: %s" % (cap, res.stderr))
    with open(out) as f:
        return json.load(f)


def ddp_account(db):
    """Rank 0's ddp_info of instance 0 as {key: value} (later rows win); {} without."""
    with sqlite3.connect(db) as c:
        tables = {r[0] for r in c.execute("SELECT name FROM sqlite_master")}
        if "ddp_info" not in tables:
            return {}
        return dict(c.execute("SELECT key, value FROM ddp_info WHERE rank = 0 AND instance = 0 "
                              "ORDER BY recorded_ns, rowid").fetchall())


def steady(layout, find_unused):
    return layout["bucket_sizes"] if find_unused else layout["rebuilt_bucket_sizes"]


def first_bucket_1mib(layout, cap):
    """What DDP's rebuild would give at `cap` with the first bucket at 1 MiB
    (torch's own assignment over DDP's recorded ready order)."""
    ready = [int(i) for i in layout["rebuilt_per_bucket_param_indices"].replace(",", " ").split()]
    tensors = [torch.empty(layout["param_bytes"][i] // 4) for i in ready]
    buckets, _ = dist._compute_bucket_assignment_by_size(
        tensors, [1 << 20, int(cap * 1024 * 1024)], [False] * len(tensors), ready)
    return [sum(layout["param_bytes"][i] for i in b) for b in buckets]


class RebucketFromRecord(unittest.TestCase):
    def check(self, find_unused):
        with tempfile.TemporaryDirectory() as tmp:
            rec = os.path.join(tmp, "rec")
            extra = ["--find-unused"] if find_unused else []
            res = run([DDPSCOPE, "record", "--nproc", "2", "-o", rec, "--", PY, JOB,
                       "--cap", repr(RECORDED_CAP), "--iters", "6",
                       "--layout-out", os.path.join(tmp, "recorded.json")] + extra)
            self.assertEqual(res.returncode, 0, res.stderr)
            db = os.path.join(rec, "run.db")
            account = ddp_account(db)
            self.assertTrue(account, "%s holds no DDP account (ddp_info): record's Python "
                            "start-up hook did not run" % db)

            plans_json = os.path.join(tmp, "plans.json")
            caps = [RECORDED_CAP] + OTHER_CAPS
            res = run([DDPSCOPE, "tune", "--workload", db, "--bucket-mb",
                       ",".join(repr(c) for c in caps), "--dry-run", "--json", plans_json])
            self.assertEqual(res.returncode, 0, res.stderr)
            with open(plans_json) as f:
                out = json.load(f)
            self.assertTrue(out.get("workload_source", "").startswith("DDP's own layout"), out)

            ddp = {cap: ddp_layout(tmp, cap, find_unused) for cap in caps}
            for plan, cap in zip(out["plans"], caps):
                self.assertEqual(plan["bucket_mb"], cap)
                planned = [b["bytes"] for b in plan["buckets"]]
                self.assertEqual(planned, steady(ddp[cap], find_unused),
                                 "cap %g: tune --dry-run vs DDP itself" % cap)
            # The recorded run's own buckets are DDP's at the recorded cap.
            with open(os.path.join(tmp, "recorded.json")) as f:
                self.assertEqual(steady(json.load(f), find_unused),
                                 steady(ddp[RECORDED_CAP], find_unused))
            self.check_caps_matter(ddp, find_unused, account)

    def check_caps_matter(self, ddp, find_unused, account):
        layouts = [tuple(steady(ddp[c], find_unused)) for c in [RECORDED_CAP] + OTHER_CAPS]
        self.assertEqual(len(set(layouts)), len(layouts), "the caps give the same layouts")
        if find_unused or account.get("explicit_cap_sets_first_bucket") != "1":
            return
        # torch 2.x: a 1 MiB first bucket would have given another layout.
        cap = OTHER_CAPS[0]
        self.assertNotEqual(first_bucket_1mib(ddp[cap], cap), steady(ddp[cap], False))

    def test_rebuilt_buckets(self):
        self.check(find_unused=False)

    def test_constructor_buckets_with_find_unused_parameters(self):
        self.check(find_unused=True)


if __name__ == "__main__":
    unittest.main()
