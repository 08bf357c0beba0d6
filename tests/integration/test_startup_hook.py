#!/usr/bin/env python3
"""The Python start-up hook that gives the analysis DDP's own account.

It must be invisible to the job: a sitecustomize the hook shadows (the
user's, or Debian's) still runs, once; a job that never imports torch does not
get it imported; `--no-python-hook` falls back to the all-reduce pattern and
the report says so. With the hook, a plain DDP job's buckets are DDP's own
rebuilt_bucket_sizes and the report says they came from DDP.
"""
import json
import os
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
