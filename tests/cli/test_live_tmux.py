#!/usr/bin/env python3
"""The live line on a real terminal: a 3-rank Gloo DDP job under `record`
inside tmux (a pseudo-terminal of 100 x 20). While the job runs, the pane's
last row is the live line, one line only, its step count moving as it is
rewritten in place, the job's own output above it; when the job ends the
line is gone and the usual summary is there.

Needs tmux (scripts/setup.sh installs it); without it the test is skipped.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "support"))
import ctest_unittest  # noqa: E402

DDPSCOPE = os.environ.get("DDPSCOPE_BIN", os.path.join(ROOT, "build", "ddpscope"))
PY = os.path.join(ROOT, ".venv", "bin", "python")
TRAIN = os.path.join(ROOT, "examples", "ddp_train.py")
ROWS = 20
DONE = "LIVE-TEST-DONE"
DEADLINE_S = 240  # for the job to end: a bound on a stuck test, not a timing
STEP = re.compile(r"^ddpscope: step (\d+) \| ")


@unittest.skipUnless(shutil.which("tmux"), "tmux is not installed")
class Terminal(unittest.TestCase):
    def test_the_line_keeps_the_last_row_and_is_gone_at_the_end(self):
        server = f"ddpscope-live-{os.getpid()}"
        tmux = ["tmux", "-L", server, "-f", "/dev/null"]
        with tempfile.TemporaryDirectory(prefix="ddpscope-tmux-") as tmp:
            job = (f"OMP_NUM_THREADS=1 {DDPSCOPE} record --nproc 3 -o {tmp}/rec -- {PY} {TRAIN} "
                   "--iters 60 --layers 4 --width 512 --bucket-cap-mb 0.5; "
                   f"echo {DONE}; sleep 600")
            subprocess.run(tmux + ["new-session", "-d", "-s", "live", "-x", "100", "-y",
                                   str(ROWS), job], check=True)
            try:
                panes = self.watch(tmux)
            finally:
                subprocess.run(tmux + ["kill-server"], capture_output=True)
        running, final = panes[:-1], panes[-1]
        live = [p for p in running if STEP.match(p[-1])]
        self.assertTrue(live, "no live line on the last row while the job ran")
        for pane in live:
            self.assertEqual(sum(1 for row in pane if row.startswith("ddpscope: step")), 1, pane)
        steps = {int(STEP.match(p[-1]).group(1)) for p in live}
        self.assertGreaterEqual(len(steps), 2, f"the line never changed: {steps}")
        self.assertTrue(any(" ms/step | comm " in p[-1] for p in live))
        self.assertFalse([row for row in final if row.startswith("ddpscope: step")], final)
        self.assertTrue([row for row in final if row.startswith("ddpscope: recorded 3 ranks")],
                        final)
        self.assertTrue([row for row in final if row.startswith("trained 60 iterations")], final)

    def watch(self, tmux):
        """The pane's rows, every 100 ms, until the job's end is printed."""
        panes = []
        deadline = time.monotonic() + DEADLINE_S
        while time.monotonic() < deadline:
            r = subprocess.run(tmux + ["capture-pane", "-p", "-t", "live"], capture_output=True,
                               text=True)
            rows = r.stdout.split("\n")[:ROWS]
            rows += [""] * (ROWS - len(rows))
            panes.append(rows)
            if any(row.startswith(DONE) for row in rows):
                return panes
            time.sleep(0.1)
        self.fail(f"the job did not end within {DEADLINE_S} s: {panes[-1] if panes else None}")


if __name__ == "__main__":
    ctest_unittest.main()
