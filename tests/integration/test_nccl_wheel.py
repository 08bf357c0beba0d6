#!/usr/bin/env python3
"""The real NCCL of the PyPI wheel, without a GPU, under `ddpscope record`.

nccl_wheel_calls.py loads the wheel's libnccl.so.2 the way torch does (import
torch) and makes NCCL calls that need no device, some through torch and the
hooked ones through the global scope, where ddpscope's hooks interpose. Checked:
the calls' outcomes and the exit status are the same with and without ddpscope;
every hooked call went through a hook that resolved the real function in the
wheel's library (meta real:<symbol>); failed calls leave no communicator and no
collective behind. Run with the .venv interpreter that has the wheel.
"""
import glob
import os
import sqlite3
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DDPSCOPE = os.environ.get("DDPSCOPE_BIN", os.path.join(ROOT, "build", "ddpscope"))
SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "nccl_wheel_calls.py")
PY = sys.executable
# What the script calls through the global scope: each must reach our hook.
HOOKED = ["ncclGroupStart", "ncclGroupEnd", "ncclCommInitRank", "ncclCommInitRankConfig",
          "ncclCommInitAll", "ncclAllReduce", "ncclCommSplit", "ncclCommFinalize",
          "ncclCommDestroy", "ncclCommAbort"]
# One rank of one, as torchrun would start it: the rank file is rank-0.db.
ENV = dict(os.environ, RANK="0", WORLD_SIZE="1", LOCAL_RANK="0", PYTHONUNBUFFERED="1")


def wheel_nccl():
    libs = glob.glob(os.path.join(sys.prefix, "lib", "python*", "site-packages", "nvidia", "nccl",
                                  "lib", "libnccl.so.2"))
    if len(libs) != 1:
        raise AssertionError(f"want one NCCL wheel in {sys.prefix}, found {libs}")
    return os.path.realpath(libs[0])


class WheelNccl(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.out = os.path.join(cls.tmp.name, "rec")
        cls.plain = subprocess.run([PY, SCRIPT], capture_output=True, text=True, env=ENV,
                                   timeout=300)
        cls.recorded = subprocess.run([DDPSCOPE, "record", "-o", cls.out, "--", PY, SCRIPT],
                                      capture_output=True, text=True, env=ENV, timeout=300)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_same_outcomes_and_status(self):
        self.assertEqual(self.plain.returncode, 0, self.plain.stderr)
        self.assertEqual(self.recorded.returncode, self.plain.returncode, self.recorded.stderr)
        self.assertEqual(self.recorded.stdout, self.plain.stdout)
        # The comparison means something only if the calls went different ways.
        for name in HOOKED:
            self.assertIn(f"{name} from the library", self.plain.stderr)
            self.assertIn(f"{name} from the global scope", self.recorded.stderr)

    def test_hooks_resolve_to_the_wheel(self):
        db = os.path.join(self.out, "rank-0.db")
        self.assertTrue(os.path.exists(db), self.recorded.stderr)
        self.assertTrue(os.path.exists(os.path.join(self.out, "run.db")), self.recorded.stderr)
        con = sqlite3.connect(db)
        real = dict(con.execute("SELECT key, value FROM meta WHERE key LIKE 'real:%'"))
        con.close()
        want = wheel_nccl()
        for name in HOOKED:
            self.assertIn(f"real:{name}", real, self.recorded.stderr)
            self.assertEqual(os.path.realpath(real[f"real:{name}"]), want, name)
        # The three queries register_comm uses resolve only once a communicator exists.
        self.assertEqual(set(real), {f"real:{n}" for n in HOOKED})

    def test_failed_calls_leave_nothing(self):
        con = sqlite3.connect(os.path.join(self.out, "run.db"))
        self.assertEqual(con.execute("SELECT count(*) FROM comms").fetchone()[0], 0)
        self.assertEqual(con.execute("SELECT count(*) FROM collectives").fetchone()[0], 0)
        con.close()


if __name__ == "__main__":
    unittest.main()
