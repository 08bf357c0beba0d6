#!/usr/bin/env python3
"""`ddpscope tune` end to end: real ranks, real Gloo, results in JSON and SQLite."""
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DDPSCOPE = os.environ.get("DDPSCOPE_BIN", os.path.join(ROOT, "build", "ddpscope"))


def many_small_tensors(path):
    """160 gradients of 512 KiB with real compute per layer: where bucket size matters."""
    params = [{"name": f"layer{i}.weight", "numel": 131072, "dtype": "float32",
               "backward_us": 600.0} for i in range(160)]
    with open(path, "w") as f:
        json.dump({"name": "many-small", "params": params, "forward_us": 10000,
                   "optimizer_us": 2000}, f)


def tune(*args):
    return subprocess.run([DDPSCOPE, "tune", *args], capture_output=True, text=True, timeout=600)


class Sweep(unittest.TestCase):
    def test_u_shape_and_recommendation(self):
        with tempfile.TemporaryDirectory() as tmp:
            wl, js, db = (os.path.join(tmp, n) for n in ("w.json", "r.json", "t.db"))
            many_small_tensors(wl)
            res = tune("--workload", wl, "--backend", "gloo", "--nproc", "2", "--bucket-mb",
                       "0.25,1,4,16,256", "--iters", "6", "--warmup", "2", "--json", js, "-o", db)
            self.assertEqual(res.returncode, 0, res.stderr)
            with open(js) as f:
                out = json.load(f)
            rows = {r["bucket_mb"]: r for r in out["results"]}
            self.assertEqual(sorted(rows), [0.25, 1, 4, 16, 256])
            for r in out["results"]:
                for key in ("backend", "topology", "nranks", "bucket_mb", "iter_ms_median",
                            "comm_ms_median", "exposed_ms_median"):
                    self.assertIn(key, r)
                self.assertEqual(r["nranks"], 2)
                self.assertEqual(r["iterations"], 6)
            best = min(out["results"], key=lambda r: r["iter_ms_median"])
            table = {mb: (r["iter_ms_median"], r["exposed_ms_median"]) for mb, r in rows.items()}
            rec = out["recommendation"]
            # The recommendation is the best measured setting (within 3 % by construction).
            self.assertEqual(rec["bucket_mb"], best["bucket_mb"])
            self.assertLessEqual(rec["iter_ms_median"], best["iter_ms_median"] * 1.03)
            # Too small: latency-bound, clearly slower than the best.
            self.assertGreater(rows[0.25]["iter_ms_median"], 1.2 * best["iter_ms_median"], table)
            # Too large: one big bucket left for after backward, more exposed than
            # the middle sizes, whose buckets start while backward still runs.
            middle = min(rows[4]["exposed_ms_median"], rows[16]["exposed_ms_median"])
            self.assertGreater(rows[256]["exposed_ms_median"], 1.3 * middle, table)
            self.assertIn("bucket_cap_mb=", rec["ddp_arguments"])
            self.assertIn("recommended:", res.stdout)
            con = sqlite3.connect(db)
            self.assertEqual(con.execute("SELECT count(*) FROM tune_runs").fetchone()[0], 1)
            n = con.execute("SELECT count(*) FROM tune_results WHERE backend='gloo'").fetchone()
            self.assertEqual(n[0], 5 * 6)
            con.close()

    def test_dry_run_writes_plans(self):
        with tempfile.TemporaryDirectory() as tmp:
            js = os.path.join(tmp, "plans.json")
            res = tune("--workload", "preset:resnet50", "--dry-run", "--bucket-mb", "25,100",
                       "--json", js)
            self.assertEqual(res.returncode, 0, res.stderr)
            with open(js) as f:
                plans = json.load(f)["plans"]
            self.assertEqual([p["bucket_mb"] for p in plans], [25, 100])
            for p in plans:
                seen = sorted(i for b in p["buckets"] for i in b["params"])
                self.assertEqual(seen, list(range(161)))  # every parameter exactly once
            self.assertGreater(len(plans[0]["buckets"]), len(plans[1]["buckets"]))


class BadInput(unittest.TestCase):
    def expect_error(self, args, fragment):
        res = tune(*args)
        self.assertEqual(res.returncode, 2, res.stderr)
        self.assertEqual(len(res.stderr.strip().splitlines()), 1, res.stderr)
        self.assertIn(fragment, res.stderr)

    def test_malformed_workloads(self):
        with tempfile.TemporaryDirectory() as tmp:
            bad = os.path.join(tmp, "bad.json")
            with open(bad, "w") as f:
                f.write('{"name": "x", "params": [{"name": "w", "numel": -3, "dtype": "float32", '
                        '"backward_us": 1}], "forward_us": 1, "optimizer_us": 1}')
            self.expect_error(["--workload", bad, "--dry-run"], bad)
            broken = os.path.join(tmp, "broken.json")
            with open(broken, "w") as f:
                f.write('{"name": ')
            self.expect_error(["--workload", broken, "--dry-run"], broken)
            self.expect_error(["--workload", "preset:alexnet", "--dry-run"], "alexnet")
            self.expect_error(["--workload", os.path.join(tmp, "none.json"), "--dry-run"],
                              "none.json")

    def test_bad_flags(self):
        self.expect_error(["--backend", "carrier-pigeon", "--dry-run"], "carrier-pigeon")
        self.expect_error(["--bucket-mb", "1,zero", "--dry-run"], "zero")


if __name__ == "__main__":
    unittest.main(verbosity=2)
