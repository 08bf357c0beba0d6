#!/usr/bin/env python3
"""scripts/gpu_check.sh's multi-rank checks, held to real CPU runs on this machine.

A lent GPU has minutes, not hours: a check that cannot fail, or a launch that
does not give each rank its own NCCL_HOSTID, must be found here. Each test
feeds a check (scripts/gpu_check_ranks.py) a real 2-rank Gloo DDP run recorded
by `ddpscope record` under scripts/onegpu_rank.sh, or a copy of it doctored
into what a GPU run would hold, and asserts which checks pass and which fail:
a host-timed bucket must fail "timed by its own ring kernel", a report whose
exposed time is not the kernels' must fail the overlap check, a run without
NCCL's plugin rows must fail the plugin check.
"""
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, os.path.join(ROOT, "tests", "support"))
import ctest_unittest  # noqa: E402
import gpu_check_ranks as ranks  # noqa: E402
import gpu_check_launch as launch  # noqa: E402

BUILD = os.path.dirname(os.environ.get("DDPSCOPE_BIN", os.path.join(ROOT, "build", "ddpscope")))
ITERS = 6
SHAPE = {"layers": 4, "width": 64, "batch": 16, "bucket_cap_mb": 0.02}
RING_KERNEL = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
os.environ.setdefault("OMP_NUM_THREADS", "1")


class Collect:
    """A check(ok, what) that keeps the verdicts instead of printing them."""

    def __init__(self):
        self.results = []

    def __call__(self, ok, what):
        self.results.append((bool(ok), what))
        return ok

    def failed(self):
        return [w for ok, w in self.results if not ok]

    def passed(self):
        return [w for ok, w in self.results if ok]


def run_check(fn, *args):
    c = Collect()
    fn(c, *args)
    return c


class GpuCheckLogic(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.work = tempfile.mkdtemp(prefix="ddpscope-gpu-check-test-")
        # The section as the GPU machine runs it, on Gloo: record, report, the
        # plain run, the late rank.
        cls.section = Collect()
        ranks.ranks_section(cls.section, BUILD, cls.work, 2, device="cpu", iters=ITERS,
                            shape=SHAPE)
        cls.out = os.path.join(cls.work, "ddp-2")
        cls.accounts = ranks.ddp_accounts(os.path.join(cls.out, "ddp"), 2)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.work, ignore_errors=True)

    def db(self):
        return sqlite3.connect(os.path.join(self.out, "run.db"))

    def doctored(self, name):
        """A copy of the Gloo run's database (and its folder) to turn into a GPU run."""
        out = os.path.join(self.work, name)
        shutil.copytree(self.out, out)
        return out, sqlite3.connect(os.path.join(out, "run.db"))

    def bucket_ids(self, db):
        return [c[0] for r, a in enumerate(self.accounts)
                for it in ranks.bucket_calls(db, r, a, ITERS) for c in it]

    def as_ring_kernels(self, db):
        """Every bucket all-reduce CUPTI-timed, its own NCCL kernel over its span."""
        for cid in self.bucket_ids(db):
            rank, s, e = db.execute("SELECT rank, start_ns, end_ns FROM collectives WHERE id=?",
                                    (cid,)).fetchone()
            db.execute("UPDATE collectives SET timing='cupti' WHERE id=?", (cid,))
            db.execute("INSERT INTO kernels(rank, device, stream, name, start_ns, end_ns, "
                       "correlation, collective_id, kind) VALUES (?, 0, 7, ?, ?, ?, ?, ?, 'comm')",
                       (rank, RING_KERNEL, s, e, cid, cid))
        db.commit()

    def test_the_section_passes_on_gloo(self):
        self.assertEqual(self.section.failed(), [])
        self.assertGreaterEqual(len(self.section.passed()), 8, self.section.passed())

    def test_each_rank_gets_its_own_host_id(self):
        out = os.path.join(self.work, "hostid")
        probe = ("import os, sys; open(os.path.join(sys.argv[1], 'env-' + os.environ['RANK']), "
                 "'w').write(' '.join(os.environ.get(k, '-') for k in ('NCCL_HOSTID', "
                 "'NCCL_SOCKET_IFNAME', 'NCCL_IB_DISABLE')))")
        os.makedirs(out)
        r = subprocess.run(launch.record_cmd(BUILD, os.path.join(out, "rec"), 3,
                                            ["-c", probe, out]),
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        seen = [open(os.path.join(out, f"env-{k}")).read() for k in range(3)]
        self.assertEqual(seen, [f"ddpscope-onegpu-rank-{k} lo 1" for k in range(3)])

    def test_the_wrapper_refuses_to_run_outside_a_launcher(self):
        env = {k: v for k, v in os.environ.items() if k != "RANK"}
        r = subprocess.run([launch.ONEGPU_RANK, "true"], env=env, capture_output=True, text=True)
        self.assertEqual((r.returncode, len(r.stderr.strip().splitlines())), (2, 1), r.stderr)
        self.assertIn("RANK is not set", r.stderr)

    def test_sizes_must_be_ddps(self):
        self.assertEqual(run_check(ranks.check_bucket_sizes, self.db(), self.accounts,
                                   ITERS).failed(), [])
        wrong = json.loads(json.dumps(self.accounts))
        wrong[1]["rebuilt_bucket_sizes"][0] += 4
        failed = run_check(ranks.check_bucket_sizes, self.db(), wrong, ITERS).failed()
        self.assertEqual(len(failed), 1, failed)
        self.assertIn("rank 1", failed[0])

    def test_a_host_timed_bucket_fails_the_ring_kernel_check(self):
        failed = run_check(ranks.check_ring_kernels, self.db(), self.accounts, ITERS).failed()
        self.assertEqual(len(failed), 2, failed)  # Gloo: every bucket host-timed, both ranks
        _, db = self.doctored("ring")
        self.as_ring_kernels(db)
        self.assertEqual(run_check(ranks.check_ring_kernels, db, self.accounts, ITERS).failed(),
                         [])
        ids = self.bucket_ids(db)
        db.execute("UPDATE collectives SET timing='host' WHERE id=?", (ids[3],))
        db.commit()
        failed = run_check(ranks.check_ring_kernels, db, self.accounts, ITERS).failed()
        self.assertEqual(len(failed), 1, failed)
        self.assertIn("(1 not)", failed[0])

    def test_a_bucket_timed_by_another_kernel_fails(self):
        _, db = self.doctored("other-kernel")
        self.as_ring_kernels(db)
        db.execute("UPDATE kernels SET name='void at::native::elementwise_kernel<128, 2>' "
                   "WHERE collective_id=?", (self.bucket_ids(db)[-1],))
        db.commit()
        self.assertEqual(len(run_check(ranks.check_ring_kernels, db, self.accounts,
                                       ITERS).failed()), 1)

    def test_a_bucket_linked_to_an_all_gather_kernel_fails(self):
        _, db = self.doctored("all-gather-kernel")
        self.as_ring_kernels(db)
        self.assertEqual(run_check(ranks.check_kernel_ops, db).failed(), [])
        db.execute("UPDATE kernels SET name='ncclDevKernel_AllGather_RING_LL(x)' "
                   "WHERE collective_id=?", (self.bucket_ids(db)[2],))
        db.commit()
        failed = run_check(ranks.check_ring_kernels, db, self.accounts, ITERS).failed()
        self.assertEqual(len(failed), 1, failed)
        failed = run_check(ranks.check_kernel_ops, db).failed()
        self.assertEqual(len(failed), 1, failed)
        self.assertIn("allreduce", failed[0])

    def test_an_all_gather_must_run_all_gather_kernels(self):
        _, db = self.doctored("gather-kernels")
        self.as_ring_kernels(db)
        gathers = [i for (i,) in db.execute("SELECT id FROM collectives WHERE op='allgather'")]
        self.assertTrue(gathers, "DDP's start-up all-gathers its parameter shapes")
        for cid in gathers:
            db.execute("INSERT INTO kernels(rank, device, stream, name, start_ns, end_ns, "
                       "correlation, collective_id, kind) VALUES (0, 0, 7, ?, 1, 2, 0, ?, 'comm')",
                       ("ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", cid))
        db.commit()
        self.assertEqual(run_check(ranks.check_kernel_ops, db).failed(), [])
        db.execute("UPDATE kernels SET name=? WHERE collective_id=?", (RING_KERNEL, gathers[0]))
        db.commit()
        failed = run_check(ranks.check_kernel_ops, db).failed()
        self.assertEqual(len(failed), 1, failed)
        self.assertIn("allgather", failed[0])
        self.assertFalse(ranks.runs_op("ncclDevKernel_ReduceScatter_Sum_f32_RING_LL", "reduce"))
        self.assertTrue(ranks.runs_op("ncclSymkDevKernel_AllReduce_RSxLD_AGxST_sum_f32", "allreduce"))

    def overlap_run(self, name, hide):
        """A GPU-like run whose compute kernels cover the first `hide` share of
        every rank's first bucket, then `ddpscope report` on it."""
        out, db = self.doctored(name)
        self.as_ring_kernels(db)
        for r, a in enumerate(self.accounts):
            for it in ranks.bucket_calls(db, r, a, ITERS):
                _, _, _, s, e = it[0]
                db.execute("INSERT INTO kernels(rank, device, stream, name, start_ns, end_ns, "
                           "correlation, collective_id, kind) VALUES (?, 0, 0, 'gemm', ?, ?, "
                           "0, NULL, 'compute')", (r, s - 1000, s + int((e - s) * hide)))
        db.commit()
        os.remove(os.path.join(out, "report.json"))
        report = launch.report_json(BUILD, out)
        self.assertIsNotNone(report)
        return db, report

    def test_exposed_time_is_the_kernels(self):
        db, report = self.overlap_run("overlap", 0.5)
        c = run_check(ranks.check_overlap, db, report, self.accounts, ITERS)
        self.assertEqual(c.failed(), [])
        report["iteration_list"][2]["exposed_ms"] += 0.05
        failed = run_check(ranks.check_overlap, db, report, self.accounts, ITERS).failed()
        self.assertEqual(len(failed), 1, failed)
        self.assertIn("exposed communication equals the kernels'", failed[0])

    def test_nothing_hidden_fails_the_overlap_check(self):
        db, report = self.overlap_run("hidden-none", 0.0)
        failed = run_check(ranks.check_overlap, db, report, self.accounts, ITERS).failed()
        self.assertEqual(len(failed), 1, failed)
        self.assertIn("partly hidden", failed[0])

    def test_no_plugin_rows_fail_the_plugin_check(self):
        failed = run_check(ranks.check_plugin, self.db()).failed()
        self.assertEqual(len(failed), 3, failed)
        _, db = self.doctored("plugin")
        self.as_ring_kernels(db)
        ids = self.bucket_ids(db)
        for k, cid in enumerate(ids):
            db.execute("INSERT INTO nccl_plugin_collectives(rank, comm_hash, seq, func, algo, "
                       "proto, nchannels, nwarps, count, dtype, root, tid, start_ns, end_ns, "
                       "comm_rank, coll_key, collective_id) VALUES (0, 1, ?, 'AllReduce', "
                       "'RING', 'LL', 2, 16, 1, 'ncclFloat32', -1, 1, 0, 1, 0, ?, ?)",
                       (k, k + 1, cid))
        db.execute("INSERT INTO nccl_proxy_ops(rank, comm_hash, seq, channel, peer, is_send, "
                   "nsteps, chunk_bytes, start_ns, progress_ns, end_ns, coll_key) "
                   "VALUES (0, 1, 0, 0, 1, 1, 4, 65536, 0, 1, 2, 1)")
        db.execute("INSERT INTO nccl_proxy_steps(rank, comm_hash, seq, channel, peer, is_send, "
                   "step, bytes, start_ns, end_ns, coll_key) VALUES (0, 1, 0, 0, 1, 1, 0, "
                   "65536, 0, 2, 1)")
        db.commit()
        self.assertEqual(run_check(ranks.check_plugin, db).failed(), [])
        db.execute("UPDATE nccl_plugin_collectives SET collective_id=? WHERE coll_key=2",
                   (ids[0],))  # two plugin rows on one collective: not one-to-one
        db.commit()
        failed = run_check(ranks.check_plugin, db).failed()
        self.assertEqual(len(failed), 1, failed)
        self.assertIn("one-to-one", failed[0])

    def test_the_late_rank_must_be_named_at_its_lateness(self):
        # The recorded report, its lateness set to known values: the bound is
        # the check's, not this machine's timing.
        with open(os.path.join(self.work, "late-2", "report.json")) as f:
            report = json.load(f)
        for r in report["ranks"]:
            late = 41.0 if r["rank"] == 1 else 0.0
            r["late_ms_median"] = r["iteration_late_ms_median"] = late
        ok = run_check(ranks.check_late_rank, report, 1, ranks.SLEEP_MS)
        self.assertEqual(ok.failed(), [])
        self.assertEqual(len(run_check(ranks.check_late_rank, report, 0,
                                       ranks.SLEEP_MS).failed()), 1)
        self.assertEqual(len(run_check(ranks.check_late_rank, report, 1,
                                       2 * ranks.SLEEP_MS).failed()), 1)
        self.assertEqual(len(run_check(ranks.check_late_rank, report, 1, 30.0).failed()), 1)  # 37 %
        self.assertEqual(run_check(ranks.check_late_rank, report, 1, ranks.SLEEP_MS,
                                   None).failed(), [])
        self.assertEqual(len(run_check(ranks.check_late_rank, report, 0, ranks.SLEEP_MS,
                                       None).failed()), 1)

    def test_the_hang_check_wants_the_gpu_s_state(self):
        with open(os.path.join(self.work, "stall-2", "report.json")) as f:
            report = json.load(f)
        self.assertEqual(run_check(ranks.check_hang, report, 2, "running").failed(), [])
        self.assertEqual(len(run_check(ranks.check_hang, report, 2, "enqueued").failed()), 1)
        self.assertEqual(len(run_check(ranks.check_hang, {"hangs": []}, 2, "running").failed()), 1)
        # The long stall: the collective must have stayed in flight that long.
        waited = report["hangs"][0]["waited_s"]
        self.assertEqual(run_check(ranks.check_hang, report, 2, "running", waited).failed(), [])
        self.assertEqual(len(run_check(ranks.check_hang, report, 2, "running",
                                       waited + 1).failed()), 1)

    def test_the_long_stall_section_on_gloo(self):
        c = Collect()
        ranks.stall_section(c, BUILD, self.work, 2, device="cpu", iters=ITERS, shape=SHAPE,
                            hang_after=7)
        self.assertEqual(c.failed(), [])
        self.assertEqual(len(c.passed()), 2, c.passed())

    def test_event_timing_check(self):
        failed = run_check(ranks.check_event_timing, self.db(), self.accounts, ITERS).failed()
        self.assertEqual(len(failed), 2, failed)  # host-timed on both ranks
        _, db = self.doctored("events")
        db.execute("UPDATE collectives SET timing='event'")
        db.commit()
        self.assertEqual(run_check(ranks.check_event_timing, db, self.accounts, ITERS).failed(),
                         [])

    def test_the_tuners_ranks_started_by_the_check(self):
        tuned = launch.tune_ranks(BUILD, self.work, 2, "gloo")
        c = run_check(ranks.check_tuner, tuned, "gloo", 2)
        self.assertEqual(c.failed(), [])
        self.assertEqual(len(run_check(ranks.check_tuner, None, "nccl", 2).failed()), 1)

    def test_ncclss_refusal_is_quoted(self):
        text = ("[rank0]: Traceback (most recent call last):\n"
                "host:1:2 [0] init.cc:1034 NCCL WARN Duplicate GPU detected : rank 0 and rank 1 "
                "both on CUDA device 1d000\n"
                "torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:77, "
                "invalid usage\n  File \"x.py\", line 3\n")
        lines = launch.nccl_refusal(text)
        self.assertEqual(len(lines), 2, lines)
        self.assertIn("Duplicate GPU detected", lines[0])


if __name__ == "__main__":
    ctest_unittest.main()
