#!/usr/bin/env python3
"""A job that hangs or dies keeps, in its rank files, where it stopped.

Real 3-rank Gloo DDP jobs (examples/ddp_train.py) under `ddpscope record`:

- Stall: rank 2 stops for good before the backward of iteration 3; ranks 0
  and 1 enter that backward's bucket all-reduces and wait in Gloo (one at a
  time under torch 1.13; under 2.x ProcessGroupGloo's worker threads take
  several). Once their files list them in flight, `record` gets SIGINT
  (Ctrl-C). Both waiting ranks' files (and the merged run.db) list the same
  all-reduces in flight, the first of them of the bytes of DDP's first bucket;
  rank 2 lists none, and its last completed all-reduce is an earlier
  iteration's.
- Abort: rank 2 aborts (SIGABRT, as Gloo's enforce does through
  std::terminate) before the backward of iteration 3. Its file is there and
  readable, with the collectives of the iterations before, and the run merged.

Run by each torch Python (tests/torch_pythons.cmake).
"""
import os
import signal
import sqlite3
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
TRAIN = os.path.join(ROOT, "examples", "ddp_train.py")
STALL_AT = 3
FLUSH_MS = 100
# Buckets of a layer each (wide layers, a small cap): DDP's first bucket is
# the last layer's gradients.
JOB = ["--iters", "8", "--layers", "4", "--width", "64", "--bucket-cap-mb", "0.01",
       "--stall-at", str(STALL_AT)]
ENV = dict(os.environ, OMP_NUM_THREADS="1")
DEADLINE_S = 120  # for the job to reach the stall: a bound on a hung test, not a timing


def inflight(db_path):
    """The all-reduces a rank file lists in flight; [] while it cannot be read yet."""
    try:
        db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
        return db.execute("SELECT seq, op, bytes, state FROM inflight WHERE op='allreduce'"
                          ).fetchall()
    except sqlite3.Error:
        return []


def ddp_layout(db, key):
    """A DDP layout as its start-up hook recorded it (reduction order):
    bucket_sizes (the first iteration's) or rebuilt_bucket_sizes."""
    row = db.execute("SELECT value FROM ddp_info WHERE key=? ORDER BY recorded_ns DESC LIMIT 1",
                     (key,)).fetchone()
    return [int(x) for x in row[0].replace(",", " ").split()] if row and row[0] else []


def before_stall(db):
    """Bucket all-reduces of the iterations before the stall."""
    return (len(ddp_layout(db, "bucket_sizes")) +
            (STALL_AT - 1) * len(ddp_layout(db, "rebuilt_bucket_sizes")))


def allreduces(path):
    """(count, max seq) of the completed all-reduces in a rank file."""
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        return db.execute("SELECT count(*), max(seq) FROM collectives WHERE op='allreduce'"
                          ).fetchone(), before_stall(db)
    except sqlite3.Error:
        return (0, None), -1


def stalled(files):
    """The hang, and nothing transient: rank 2 completed exactly the iterations
    before the stall, and ranks 0 and 1 list the same all-reduces, past its last."""
    (done, last), want = allreduces(files[2])
    waiting = [sorted(inflight(files[r])) for r in (0, 1)]
    return (done == want and last is not None and waiting[0] and waiting[0] == waiting[1] and
            waiting[0][0][0] > last)


class Stall(unittest.TestCase):
    def test_waiting_ranks_list_the_stuck_bucket(self):
        with tempfile.TemporaryDirectory(prefix="ddpscope-stall-") as out:
            rec = subprocess.Popen(
                [DDPSCOPE, "record", "--nproc", "3", "-o", out, "--flush-ms", str(FLUSH_MS),
                 "--", sys.executable, TRAIN, *JOB, "--stall-rank", "2"],
                env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            files = {r: os.path.join(out, f"rank-{r}.db") for r in range(3)}
            waited = 0.0
            while waited < DEADLINE_S and not stalled(files):
                time.sleep(0.5)
                waited += 0.5
            rec.send_signal(signal.SIGINT)
            stdout, stderr = rec.communicate(timeout=120)
            stuck = {r: sorted(inflight(files[r])) for r in range(3)}
            self.assertTrue(stuck[0] and stuck[1], f"nothing in flight: {stuck}\n{stderr}")
            self.assertEqual(stuck[0], stuck[1], "not the same collectives")
            self.assertEqual(stuck[2], [], "the stalled rank entered nothing")
            db = sqlite3.connect(files[0])
            buckets = ddp_layout(db, "rebuilt_bucket_sizes")
            self.assertTrue(buckets, "no DDP account in the rank file")
            seq, op, nbytes, state = stuck[0][0]
            self.assertEqual((op, nbytes, state), ("allreduce", buckets[0], "running"))
            # The stalled rank completed the iterations before, not this one.
            last = sqlite3.connect(files[2]).execute(
                "SELECT max(seq) FROM collectives WHERE op='allreduce' AND comm_id = "
                "(SELECT comm_id FROM collectives WHERE op='allreduce' GROUP BY comm_id "
                "ORDER BY sum(bytes) DESC LIMIT 1)").fetchone()[0]
            self.assertLess(last, seq)
            run = os.path.join(out, "run.db")
            self.assertTrue(os.path.exists(run), stdout + stderr)
            merged = sqlite3.connect(run).execute(
                "SELECT rank, seq, bytes FROM inflight ORDER BY rank, seq").fetchall()
            self.assertEqual(merged, [(r, s, b) for r in (0, 1) for s, _, b, _ in stuck[r]])


class Abort(unittest.TestCase):
    def test_an_aborted_rank_keeps_its_file(self):
        with tempfile.TemporaryDirectory(prefix="ddpscope-abort-") as out:
            r = subprocess.run(
                [DDPSCOPE, "record", "--nproc", "3", "-o", out, "--flush-ms", str(FLUSH_MS),
                 "--", sys.executable, TRAIN, *JOB, "--abort-rank", "2"],
                env=ENV, capture_output=True, text=True, timeout=300)
            self.assertNotEqual(r.returncode, 0, "a rank aborted: the job failed")
            path = os.path.join(out, "rank-2.db")
            self.assertTrue(os.path.exists(path), f"no file of the aborted rank\n{r.stderr}")
            db = sqlite3.connect(path)
            self.assertEqual(db.execute("PRAGMA integrity_check").fetchone()[0], "ok")
            done = db.execute("SELECT count(*) FROM collectives WHERE op='allreduce'"
                              ).fetchone()[0]
            # Iterations 0..STALL_AT-1 reduced every bucket of DDP's layouts.
            self.assertEqual(done, before_stall(db))
            self.assertTrue(os.path.exists(os.path.join(out, "run.db")), r.stderr)


if __name__ == "__main__":
    ctest_unittest.main()
