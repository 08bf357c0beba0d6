#!/usr/bin/env python3
"""A job that hangs, dies or desyncs: its rank files keep where it stopped,
and `report` says which rank, which collective, which bucket.

Real 3-rank Gloo DDP jobs (examples/ddp_train.py) under `ddpscope record`:

- Stall: rank 2 stops for good before the backward of iteration 3; ranks 0
  and 1 enter that backward's bucket all-reduces and wait in Gloo (one at a
  time under torch 1.13; under 2.x ProcessGroupGloo's worker threads take
  several). Once their files list them in flight, `record` gets SIGINT
  (Ctrl-C). Both waiting ranks' files (and the merged run.db) list the same
  all-reduces in flight, the first of them of the bytes of DDP's first bucket;
  rank 2 lists none, and its last completed all-reduce is an earlier
  iteration's. The report's hangs[] names the waiting ranks, the missing
  one (killed by SIGINT), DDP's bucket 0 of iteration 3 and its bytes.
- Die: rank 2 dies before the backward of iteration 3: SIGABRT (as Gloo's
  enforce does through std::terminate), SIGSEGV, SIGBUS, or os._exit after
  three flush intervals. Its file is there and readable, with the
  collectives of the iterations before, the run merged, and its end reported.
- Raise: rank 2 raises before the backward of iteration 3: the report gives
  its exit status (1) and names ranks 0 and 1 waiting.
- Mismatch: at iteration 3 ranks 0 and 1 all-reduce 4 elements, rank 2 seven
  (Gloo's enforce aborts it): mismatches[] names both counts, every rank's
  file is there, the run merged.
- Unmerged: `report DIR` of the stall's rank files (read together, not
  merged) prints and writes what the report of run.db does.
- Stacks: in the stall, record asks every rank for its Python stacks before
  passing SIGINT on; the report shows the stalled rank at the line it stopped
  on (examples/ddp_train.py, in stall()).
- --hang-after 10 on the stall: record ends the job by itself (SIGTERM, exit
  143) after printing the diagnosis; the report's wait is at least 10 s.
- Healthy: a job that never hangs has no hangs[] and no mismatches[], and
  trains to the same parameters, bit for bit, as without record (with
  --hang-after set).

Run by each torch Python (tests/torch_pythons.cmake).
"""
import json
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
from ddp_jobs import digests, run_plain  # noqa: E402

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


def record(out, *job_args, flags=(), timeout=300):
    return subprocess.run(
        [DDPSCOPE, "record", "--nproc", "3", "-o", out, "--flush-ms", str(FLUSH_MS), *flags,
         "--", sys.executable, TRAIN, *JOB, *job_args],
        env=ENV, capture_output=True, text=True, timeout=timeout)


def stall_line():
    """Where a stalled rank sits: the sleep in ddp_train.py's stall()."""
    with open(TRAIN) as f:
        lines = f.read().splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith("def stall("))
    return next(i + 1 for i in range(start, len(lines)) if "time.sleep(1)" in lines[i])


def report(out, *flags):
    path = os.path.join(out, "report.json")
    r = subprocess.run([DDPSCOPE, "report", "-q", os.path.join(out, "run.db"), "--json", path,
                        *flags], capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        raise AssertionError(f"report failed: {r.stderr}")
    with open(path) as f:
        return json.load(f)


def every_output(run, out):
    """The terminal's, JSON and trace of `report run`, its name made RUN."""
    os.makedirs(out)
    r = subprocess.run([DDPSCOPE, "report", run, "--json", f"{out}/r.json", "--trace",
                        f"{out}/r.trace.json"], capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        raise AssertionError(f"report {run} failed: {r.stderr}")
    texts = [r.stdout]
    for name in ("r.json", "r.trace.json"):
        with open(os.path.join(out, name)) as f:
            texts.append(f.read())
    return [t.replace(run, "RUN") for t in texts]


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

            rep = report(out)
            self.assertEqual(len(rep["hangs"]), 1, rep["hangs"])
            h = rep["hangs"][0]
            self.assertEqual((h["seq"], h["op"], h["bytes"], h["bucket"], h["iteration"]),
                             (seq, "allreduce", buckets[0], 0, STALL_AT))
            self.assertEqual((h["waiting_ranks"], h["missing_ranks"]), ([0, 1], [2]))
            self.assertEqual(h["missing"][0]["last_completed"]["seq"], last)
            self.assertEqual(h["missing"][0]["signal"], signal.SIGINT)
            self.assertGreater(h["waited_s"], 0)
            self.assertEqual(rep["mismatches"], [])
            ends = {r["rank"]: (r["exit_code"], r["signal"]) for r in rep["ranks"]}
            self.assertEqual(ends[2], (None, signal.SIGINT))
            stacks = {s["rank"]: s["frames"] for s in h["stacks"]}
            self.assertEqual(sorted(stacks), [0, 1, 2], h["stacks"])
            self.assertEqual(stacks[2][0], f"{TRAIN}:{stall_line()} in stall")
            # A part of the run has no diagnosis: rank 2 left out is not missing.
            self.assertEqual(report(out, "--ranks", "0,1")["hangs"], [])
            # The rank files read together, unmerged, report it all the same.
            with tempfile.TemporaryDirectory() as outputs:
                self.assertEqual(every_output(out, os.path.join(outputs, "unmerged")),
                                 every_output(run, os.path.join(outputs, "merged")))


class Die(unittest.TestCase):
    """A rank that dies keeps its file: every way of dying."""

    def died(self, how, delay_ms=0):
        with tempfile.TemporaryDirectory(prefix=f"ddpscope-die-{how}-") as out:
            r = record(out, "--die-rank", "2", "--die-how", how, "--die-delay-ms", str(delay_ms))
            self.assertNotEqual(r.returncode, 0, "a rank died: the job failed")
            path = os.path.join(out, "rank-2.db")
            self.assertTrue(os.path.exists(path), f"no file of the dead rank\n{r.stderr}")
            db = sqlite3.connect(path)
            self.assertEqual(db.execute("PRAGMA integrity_check").fetchone()[0], "ok")
            done = db.execute("SELECT count(*) FROM collectives WHERE op='allreduce'"
                              ).fetchone()[0]
            # Iterations 0..STALL_AT-1 reduced every bucket of DDP's layouts.
            self.assertEqual(done, before_stall(db))
            self.assertTrue(os.path.exists(os.path.join(out, "run.db")), r.stderr)
            rep = report(out)
            return {x["rank"]: (x["exit_code"], x["signal"]) for x in rep["ranks"]}[2]

    def test_abort(self):  # std::terminate, a failed assertion
        self.assertEqual(self.died("abort"), (None, signal.SIGABRT))

    def test_segv(self):
        self.assertEqual(self.died("segv"), (None, signal.SIGSEGV))

    def test_bus(self):
        self.assertEqual(self.died("bus"), (None, signal.SIGBUS))

    def test_exit_without_clean_up(self):
        # os._exit runs no exit handler: what the last flush wrote stays, so
        # the rank waits three flush intervals first.
        self.assertEqual(self.died("exit", delay_ms=3 * FLUSH_MS), (3, None))


class Raise(unittest.TestCase):
    def test_the_raising_rank_s_exit_status(self):
        with tempfile.TemporaryDirectory(prefix="ddpscope-raise-") as out:
            r = record(out, "--raise-rank", "2")
            self.assertEqual(r.returncode, 1, r.stderr)
            rep = report(out)
            self.assertEqual(len(rep["hangs"]), 1, rep["hangs"])
            h = rep["hangs"][0]
            self.assertEqual((h["waiting_ranks"], h["missing_ranks"]), ([0, 1], [2]))
            self.assertEqual((h["missing"][0]["exit_code"], h["missing"][0]["ended"]),
                             (1, "exited with status 1"))
            self.assertEqual(h["bucket"], 0)


class Mismatch(unittest.TestCase):
    def test_a_desync_names_both_counts(self):
        with tempfile.TemporaryDirectory(prefix="ddpscope-mismatch-") as out:
            r = record(out, "--mismatch-rank", "2")
            self.assertNotEqual(r.returncode, 0)
            for k in range(3):
                self.assertTrue(os.path.exists(os.path.join(out, f"rank-{k}.db")), r.stderr)
            self.assertTrue(os.path.exists(os.path.join(out, "run.db")), r.stderr)
            rep = report(out)
            self.assertEqual(len(rep["mismatches"]), 1, rep["mismatches"])
            m = rep["mismatches"][0]
            shapes = sorted((s["ranks"], s["op"], s["count"]) for s in m["shapes"])
            self.assertEqual(shapes, [([0, 1], "allreduce", 4), ([2], "allreduce", 7)])


class HangAfter(unittest.TestCase):
    def test_record_ends_a_stalled_job_itself(self):
        with tempfile.TemporaryDirectory(prefix="ddpscope-hang-after-") as out:
            # The timeout guards a test that would hang; the job ends itself.
            r = record(out, "--stall-rank", "2", flags=["--hang-after", "10"], timeout=300)
            self.assertEqual(r.returncode, 128 + signal.SIGTERM, r.stderr)
            self.assertIn("stopping the job (--hang-after)", r.stderr)
            self.assertIn("where the job stopped", r.stderr)
            self.assertIn(f"ddp_train.py:{stall_line()} in stall", r.stderr)
            h = report(out)["hangs"]
            self.assertEqual(len(h), 1, h)
            self.assertEqual((h[0]["waiting_ranks"], h[0]["missing_ranks"]), ([0, 1], [2]))
            self.assertGreaterEqual(h[0]["waited_s"], 10)
            print(f"waited {h[0]['waited_s']:.2f} s before the job was ended", file=sys.stderr)


class Healthy(unittest.TestCase):
    def test_no_hang_no_mismatch_parameters_unchanged(self):
        with tempfile.TemporaryDirectory(prefix="ddpscope-healthy-") as out:
            rec = os.path.join(out, "rec")
            r = record(rec, "--params-out", os.path.join(out, "rec-params"),
                       flags=["--hang-after", "10"])
            self.assertEqual(r.returncode, 0, r.stderr)
            rep = report(rec)
            self.assertEqual((rep["hangs"], rep["mismatches"]), ([], []))
            self.assertEqual([(x["exit_code"], x["signal"], x["finalized"]) for x in rep["ranks"]],
                             [(0, None, True)] * 3)
            plain = os.path.join(out, "plain-params")
            self.assertEqual(run_plain(TRAIN, JOB, 3, plain, ENV), [0, 0, 0])
            self.assertEqual(digests(os.path.join(out, "rec-params"), 3), digests(plain, 3))


if __name__ == "__main__":
    ctest_unittest.main()
