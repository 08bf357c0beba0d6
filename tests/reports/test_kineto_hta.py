#!/usr/bin/env python3
"""`ddpscope report RUN.db --kineto DIR`, read by HTA (Holistic Trace Analysis,
the PyPI package HolisticTraceAnalysis pinned in scripts/torch-requirements.txt).

The run is the generated GPU-like one (tests/reports/gpu_run.h, written by
make_gpu_run through the store's writer and merge): 4 ranks whose NCCL
kernels are hidden behind compute to different degrees. HTA loads the
directory as it loads PyTorch profiler traces and must find every rank, every
kernel, every iteration as a ProfilerStep, NCCL's collective args on the
communication kernels, and the same communication/computation overlap per
rank as `report --json` gives (ranks[].kernel_overlap_pct), within 1
percentage point.

HTA by default leaves out the last ProfilerStep (in a PyTorch trace, the step
the profiler stopped in); ddpscope's last iteration is complete and its step
runs to the rank's last event, so the traces are loaded with
include_last_profiler_step=True: HTA then sees the whole recording, as the
figure it is compared with does. Without HTA the test is skipped (exit 77).
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
sys.path.insert(0, os.path.join(ROOT, "tests", "support"))
from ctest_unittest import main  # noqa: E402

DDPSCOPE = os.environ.get("DDPSCOPE_BIN", os.path.join(ROOT, "build", "ddpscope"))
GPU_RUN = os.environ.get("GPU_RUN_BIN", os.path.join(ROOT, "build", "make_gpu_run"))

try:
    from hta.common.trace import Trace
    from hta.configs.parser_config import ParserConfig
    from hta.trace_analysis import TraceAnalysis
    from hta.utils.utils import get_kernel_type
    MISSING = None
except ImportError as e:  # not installed: scripts/setup.sh installs it
    MISSING = str(e)


# Each test skipped (not the class set-up), so that ctest_unittest sees every
# test skipped and exits 77.
@unittest.skipIf(MISSING, f"HTA cannot be imported ({MISSING}); scripts/setup.sh installs "
                 "HolisticTraceAnalysis into .venv")
class KinetoTracesInHta(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="ddpscope-kineto-hta-")
        out = subprocess.run([GPU_RUN, cls.tmp], capture_output=True, text=True, check=True)
        cls.generated = json.loads(out.stdout)
        cls.run_db = cls.generated["path"]
        cls.dir = os.path.join(cls.tmp, "kineto")
        report = os.path.join(cls.tmp, "report.json")
        subprocess.run([DDPSCOPE, "report", "-q", cls.run_db, "--json", report, "--kineto",
                        cls.dir], check=True, capture_output=True, text=True)
        with open(report) as f:
            cls.ours = {r["rank"]: r for r in json.load(f)["ranks"]}
        with open(report) as f:
            cls.iterations = json.load(f)["iteration_list"]
        cls.hta = TraceAnalysis(trace_dir=cls.dir, include_last_profiler_step=True)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(getattr(cls, "tmp", ""), ignore_errors=True)

    def ranks(self):
        return sorted(self.ours)

    def test_every_rank_found_by_its_distributed_info(self):
        self.assertEqual(self.ranks(), [0, 1, 2, 3])
        self.assertEqual(self.hta.t.get_ranks(), self.ranks())

    def test_overlap_per_rank_is_ours_within_one_point(self):
        hta = self.hta.get_comm_comp_overlap(visualize=False)
        theirs = dict(zip(hta["rank"], hta["comp_comm_overlap_pctg"]))
        ours = {r: self.ours[r]["kernel_overlap_pct"] for r in self.ranks()}
        print("overlap % per rank, HTA vs ddpscope:",
              {r: (round(float(theirs[r]), 2), round(ours[r], 2)) for r in self.ranks()})
        # The ranks differ enough that a trace HTA misread could not pass by luck.
        self.assertGreater(max(ours.values()) - min(ours.values()), 50)
        for r in self.ranks():
            self.assertLessEqual(abs(float(theirs[r]) - ours[r]), 1.0, f"rank {r}")

    def test_every_kernel_and_its_kind(self):
        db = sqlite3.connect(self.run_db)
        stored = dict(db.execute("SELECT rank, count(*) FROM kernels GROUP BY rank"))
        comm = dict(db.execute("SELECT rank, count(*) FROM kernels WHERE kind = 'comm' "
                               "GROUP BY rank"))
        db.close()
        names = self.hta.t.symbol_table.get_sym_table()
        for r in self.ranks():
            df = self.hta.t.get_trace(r)
            gpu = df[(df["stream"] >= 0) & (df["correlation"] >= 0)]
            self.assertEqual(len(gpu), stored[r], f"rank {r}")
            self.assertEqual(len(gpu), self.generated["kernels"][r])
            kinds = gpu["name"].map(lambda i: get_kernel_type(names[i])).value_counts()
            self.assertEqual(kinds.get("COMMUNICATION", 0), comm[r], f"rank {r}")
            # Every kernel found its launch on the host (HTA's index_correlation).
            self.assertTrue((gpu["index_correlation"] > 0).all(), f"rank {r}")

    def test_a_profiler_step_per_iteration(self):
        ours = sorted({i["index"] for i in self.iterations})
        self.assertEqual(self.hta.get_profiler_steps(), ours)
        names = self.hta.t.symbol_table.get_sym_table()
        for r in self.ranks():
            df = self.hta.t.get_trace(r)
            steps = df[df["name"].map(lambda i: names[i].startswith("ProfilerStep#"))]
            self.assertEqual(len(steps), self.generated["iterations"], f"rank {r}")
            self.assertEqual(len(steps), self.ours[r]["iterations"], f"rank {r}")
            # Kernels belong to the step their launch fell in (-1: launched
            # before the first, in the first forward and backward).
            gpu = df[df["stream"] >= 0]
            self.assertEqual(set(gpu["iteration"]) - {-1}, set(ours), f"rank {r}")

    def test_nccl_collective_args(self):
        config = ParserConfig(ParserConfig.get_default_args() + ParserConfig.ARGS_COMMUNICATION)
        trace = Trace(trace_dir=self.dir, parser_config=config)
        trace.load_traces(include_last_profiler_step=True, use_multiprocessing=False)
        names = trace.symbol_table.get_sym_table()
        db = sqlite3.connect(self.run_db)
        sizes = sorted(set(b for (b,) in db.execute("SELECT bytes FROM collectives")))
        db.close()
        for r in self.ranks():
            df = trace.get_trace(r)
            comm = df[df["name"].map(lambda i: names[i].startswith("ncclDevKernel_"))]
            self.assertEqual(len(comm), self.generated["comm_kernels"][r])
            self.assertEqual(set(comm["collective_name"]), {"allreduce"})
            self.assertEqual(set(comm["msg_dtype"]), {"Float"})
            self.assertEqual(set(comm["group_size"]), {4})
            self.assertEqual(sorted(set(comm["in_msg_nelems"] * 4)), sizes)


if __name__ == "__main__":
    main()
