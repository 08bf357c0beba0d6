#!/usr/bin/env python3
"""scripts/gpu_check.sh's FSDP2 section (scripts/gpu_check_fsdp.py), held to a
real 2-rank Gloo FSDP2 run on this machine, recorded under
scripts/onegpu_rank.sh as on the GPU, and to doctored copies of its report
and database: every check must pass on the real run and fail on the copy made
to break it. Needs a torch with FSDP2 (the PyPI wheel); skipped under
Debian's 1.13, which has none.
"""
import copy
import os
import shutil
import sqlite3
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, os.path.join(ROOT, "tests", "support"))
sys.path.insert(0, HERE)
import ctest_unittest  # noqa: E402
import gpu_check_fsdp as fsdp  # noqa: E402
from test_gpu_check_logic import BUILD, Collect, run_check  # noqa: E402

try:
    from torch.distributed.fsdp import fully_shard  # noqa: F401
    HAS_FSDP2 = True
except (ImportError, ValueError):
    HAS_FSDP2 = False

ITERS = 5
SHAPE = {"blocks": 3, "width": 64, "batch": 16}


@unittest.skipUnless(HAS_FSDP2, "this torch has no FSDP2 (torch.distributed.fsdp.fully_shard)")
class FsdpCheck(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.work = tempfile.mkdtemp(prefix="ddpscope-gpu-check-fsdp-")
        cls.section = Collect()
        fsdp.fsdp_section(cls.section, BUILD, cls.work, 2, device="cpu", iters=ITERS, shape=SHAPE)
        out = os.path.join(cls.work, "fsdp-2")
        cls.report = fsdp.report_json(BUILD, out)
        cls.accounts = fsdp.fsdp_accounts(os.path.join(out, "fsdp"), 2)
        cls.db = os.path.join(out, "run.db")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.work, ignore_errors=True)

    def test_every_check_passes_on_the_real_run(self):
        self.assertEqual(self.section.failed(), [])
        self.assertGreaterEqual(len(self.section.passed()), 8)

    def test_a_wrong_size_fails(self):
        report = copy.deepcopy(self.report)
        report["fsdp"][0]["units"][1]["phases"][0]["bytes"] += 4
        c = run_check(fsdp.check_sizes, report, self.accounts, False)
        self.assertTrue(any("sizes equal" in w for w in c.failed()), c.results)

    def test_an_invented_ddp_fails(self):
        report = copy.deepcopy(self.report)
        report["ddp"] = [{"instance": 0, "buckets_from": "pattern"}]
        report["roles"].append({"role": "ddp_bucket", "calls": 10})
        c = run_check(fsdp.check_roles, report, ITERS)
        self.assertEqual(len(c.failed()), 2, c.results)

    def test_a_gpu_run_must_not_carry_reduce_scatters_as_all_reduces(self):
        c = run_check(fsdp.check_sizes, self.report, self.accounts, True)
        self.assertTrue(any("carried as" in w for w in c.failed()), c.results)

    def test_exposed_beyond_the_collective_fails(self):
        report = copy.deepcopy(self.report)
        p = report["fsdp"][0]["units"][0]["phases"][0]
        p["exposed_us"] = p["median_us"] * 2 + 10
        c = run_check(fsdp.check_exposure, report, False)
        self.assertTrue(any("exposed within" in w for w in c.failed()), c.results)

    def test_kernels_of_another_op_fail(self):
        """A Gloo run has no kernels (fails: none linked); with an AllReduce
        kernel planted on every all-gather it fails as wrongly linked."""
        with tempfile.TemporaryDirectory() as tmp:
            db_path = os.path.join(tmp, "run.db")
            shutil.copy(self.db, db_path)
            db = sqlite3.connect(db_path)
            self.assertIn("linked to a kernel", " ".join(run_check(fsdp.check_fsdp_kernels,
                                                                   db).failed()))
            for (cid, rank) in db.execute("SELECT id, rank FROM collectives WHERE op='allgather'"):
                db.execute("INSERT INTO kernels(rank, device, stream, name, start_ns, end_ns, "
                           "correlation, collective_id, kind) VALUES (?, 0, 7, "
                           "'ncclDevKernel_AllReduce_Sum_f32_RING_LL', 0, 1, 0, ?, 'comm')",
                           (rank, cid))
            c = run_check(fsdp.check_fsdp_kernels, db)
            self.assertTrue(any("run their own kernels" in w for w in c.failed()), c.results)


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    ctest_unittest.main(argv=[sys.argv[0]] + sys.argv[1:])
