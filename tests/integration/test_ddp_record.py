#!/usr/bin/env python3
"""`ddpscope record` on real PyTorch DDP jobs (CPU, Gloo).

Run by each torch Python (tests/torch_pythons.cmake: the PyPI wheel and
Debian's python3-torch); the ranks run under the same Python (sys.executable).
For every rank the recorded all-reduces must be exactly DDP's own account of
its buckets: `bucket_sizes` once (the first iteration, before DDP rebuilds its
buckets), then `rebuilt_bucket_sizes` once per later iteration, then the
example's final 4-byte loss all-reduce. The job's output, exit status and
trained parameters must be what they are without ddpscope.
"""
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DDPSCOPE = os.environ.get("DDPSCOPE_BIN", os.path.join(ROOT, "build", "ddpscope"))
EXAMPLE = os.path.join(ROOT, "examples", "ddp_train.py")
PY = sys.executable
ITERS = 6
# One intra-op thread per rank, in the recorded and the plain runs alike. Two
# or three ranks of torch's default thread pool oversubscribe a small machine,
# and the PyPI wheel's OpenMP threads spin while they wait: on 2 loaded cores
# its steps took ~1 s instead of ~10 ms (Debian's torch 1.13: ~80 ms), and DDP's
# own timings, which the analysis is compared with, became noise.
JOB_ENV = dict(os.environ, OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_plain(nproc, args, example=EXAMPLE):
    """The job without ddpscope, launched the way torchrun would."""
    port = str(free_port())
    procs = []
    for r in range(nproc):
        env = dict(JOB_ENV, RANK=str(r), LOCAL_RANK=str(r), WORLD_SIZE=str(nproc),
                   LOCAL_WORLD_SIZE=str(nproc), MASTER_ADDR="127.0.0.1", MASTER_PORT=port)
        procs.append(subprocess.Popen([PY, example] + args, env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True))
    outs = [p.communicate(timeout=300) for p in procs]
    return "".join(o for o, _ in outs), [p.returncode for p in procs]


def record(out_dir, nproc, cmd, check=True):
    argv = [DDPSCOPE, "record", "-o", out_dir]
    if nproc:
        argv += ["--nproc", str(nproc)]
    res = subprocess.run(argv + ["--"] + cmd, capture_output=True, text=True, timeout=300,
                         env=JOB_ENV)
    if check and res.returncode != 0:
        raise AssertionError(f"record failed ({res.returncode}): {res.stderr}")
    return res


def params_digests(params_dir, nproc):
    """Each rank's digest of its trained parameters (examples/ddp_train.py --params-out)."""
    digests = []
    for rank in range(nproc):
        with open(os.path.join(params_dir, f"params-rank{rank}.json")) as f:
            digests.append(json.load(f))
    return digests


def assert_unperturbed(test, recorded_dir, plain_dir, nproc):
    """DDP keeps the replicas equal, and recording changes no parameter bit."""
    recorded = params_digests(recorded_dir, nproc)
    plain = params_digests(plain_dir, nproc)
    for rank in range(nproc):
        test.assertEqual(recorded[rank]["sha256"], recorded[0]["sha256"],
                         f"rank {rank} diverged from rank 0: {recorded[rank]['head']}")
        # The first values name the layer that moved when the digests differ.
        test.assertEqual((recorded[rank]["sha256"], recorded[rank]["head"]),
                         (plain[rank]["sha256"], plain[rank]["head"]),
                         f"rank {rank}: recorded parameters differ from the plain run's")


def allreduce_sizes(db, rank):
    # Gloo may execute out of issue order on its worker threads: seq (the Gloo
    # tag) is issue order.
    con = sqlite3.connect(db)
    rows = con.execute("SELECT bytes FROM collectives WHERE rank=? AND op='allreduce' "
                       "ORDER BY seq", (rank,)).fetchall()
    con.close()
    return [r[0] for r in rows]


class RecordDDP(unittest.TestCase):
    def check_job(self, nproc):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "rec")
            logs = os.path.join(tmp, "ddp")
            params = os.path.join(tmp, "params")
            job = ["--iters", str(ITERS), "--bucket-cap-mb", "0.25"]
            args = job + ["--ddp-log", logs, "--params-out", params]
            res = record(out, nproc, [PY, EXAMPLE] + args)
            db = os.path.join(out, "run.db")
            self.assertTrue(os.path.exists(db), res.stderr)
            for rank in range(nproc):
                with open(os.path.join(logs, f"ddp-rank{rank}.json")) as f:
                    ddp = json.load(f)
                self.assertGreater(len(ddp["rebuilt_bucket_sizes"]), 1, "want several buckets")
                want = ddp["bucket_sizes"] + ddp["rebuilt_bucket_sizes"] * (ITERS - 1) + [4]
                self.assertEqual(allreduce_sizes(db, rank), want, f"rank {rank}")
            con = sqlite3.connect(db)
            procs = con.execute("SELECT rank, world_size, backend, rank_source, dropped_events "
                                "FROM processes ORDER BY rank").fetchall()
            self.assertEqual(procs, [(r, nproc, "gloo", "RANK", 0) for r in range(nproc)])
            comms = con.execute("SELECT DISTINCT comm_id, nranks FROM comms").fetchall()
            self.assertEqual(len(comms), 1)
            self.assertEqual(comms[0][1], nproc)
            # Same collective, same (comm_id, seq), on every rank.
            matched = con.execute("SELECT count(*) FROM (SELECT comm_id, seq FROM collectives "
                                  "GROUP BY comm_id, seq HAVING count(*) = ?)", (nproc,)).fetchone()
            total = con.execute("SELECT count(*) FROM collectives WHERE rank=0").fetchone()
            self.assertEqual(matched, total)
            con.close()
            # Output and training unchanged: compare with the same job run without us.
            plain_params = os.path.join(tmp, "plain-params")
            plain_out, codes = run_plain(nproc, job + ["--ddp-log", os.path.join(tmp, "plain-ddp"),
                                                       "--params-out", plain_params])
            self.assertEqual(codes, [0] * nproc)
            self.assertEqual(res.stdout, plain_out)
            assert_unperturbed(self, params, plain_params, nproc)
            report = subprocess.run([DDPSCOPE, "report", db], capture_output=True, text=True)
            self.assertEqual(report.returncode, 0, report.stderr)
            self.assertIn("allreduce", report.stdout)
            self.check_analysis(db, logs, nproc, tmp)

    def check_analysis(self, db, logs, nproc, tmp):
        """The report's iterations and buckets are DDP's own."""
        out = os.path.join(tmp, "report.json")
        res = subprocess.run([DDPSCOPE, "report", "-q", db, "--json", out], capture_output=True,
                             text=True)
        self.assertEqual(res.returncode, 0, res.stderr)
        with open(out) as f:
            report = json.load(f)
        self.assertEqual(report["world_size"], nproc)
        self.assertEqual(report["backend"], "gloo")
        # Every training step is one iteration; DDP's first (pre-rebuild) one is the warm-up.
        self.assertEqual(report["iterations"]["count"], ITERS)
        self.assertEqual(report["iterations"]["warmup"], 1)
        for rank in range(nproc):
            with open(os.path.join(logs, f"ddp-rank{rank}.json")) as f:
                ddp = json.load(f)
            self.assertEqual([b["bytes"] for b in report["buckets"]], ddp["rebuilt_bucket_sizes"])
            # DDP averages its backward communication span over the iterations it
            # sampled: every one that a later forward pass followed (all but the last).
            ours = [i["comm_ms"] for i in report["iteration_list"] if i["rank"] == rank][:-1]
            mean_ms = sum(ours) / len(ours)
            ddp_ms = ddp["avg_backward_comm_time"] / 1e6
            # DDP's span runs from launching the first bucket (reducer thread) to
            # finalize_backward after the last bucket's future completed; ours from
            # the first all-reduce starting to the last ending on Gloo's worker
            # thread, so it lies inside DDP's: never longer (1 ms + 5 % for clock
            # reads and sampling), shorter by the thread hand-offs at both ends.
            # Those grow with load: 7-37 % shorter seen on PyPI's torch with a 5-20 ms
            # span on this 2-core VM at load 2-5, 2-6 % on Debian's quiet. Half of
            # DDP's is the floor: missing buckets or iterations would go far below.
            msg = f"rank {rank}: ours {mean_ms:.2f} ms, DDP {ddp_ms:.2f} ms"
            self.assertLessEqual(mean_ms, ddp_ms * 1.05 + 1.0, msg)
            self.assertGreaterEqual(mean_ms, ddp_ms * 0.5, msg)
        self.assertEqual(len(report["ranks"]), nproc)
        # The recorded run as a tuner workload: at the job's own cap, the
        # bucketizer gives back the buckets DDP used. The first bucket's cap is
        # torch's choice (1 MiB on torch 1.13, bucket_cap_mb on torch 2.15),
        # which the workload carries from DDP's own account.
        res = subprocess.run([DDPSCOPE, "tune", "--workload", db, "--bucket-mb", "0.25",
                              "--dry-run"], capture_output=True, text=True)
        self.assertEqual(res.returncode, 0, res.stderr)
        plan = json.loads(res.stdout)["plans"][0]["buckets"]
        self.assertEqual([b["bytes"] for b in plan], [b["bytes"] for b in report["buckets"]])
        # The example runs find_unused_parameters=False: static_graph would save
        # nothing per iteration, so it must not be advised (issue 14).
        self.assertFalse(any(r["setting"] == "static_graph" for r in report["recommendations"]))

    def test_two_ranks(self):
        self.check_job(2)

    def test_three_ranks(self):
        self.check_job(3)


class Straggler(unittest.TestCase):
    def test_slow_rank_is_named(self):
        """Rank 2 spends 80 ms more per step: the report must say it is late.
        (80, not 40: at load 10 a 40 ms sleep showed as 19 ms of median lateness,
        the others being slowed too; the bounds stay 20 and 10 ms.)"""
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "rec")
            job = ["--iters", "8", "--bucket-cap-mb", "0.25", "--sleep-ms", "80",
                   "--sleep-rank", "2"]
            params, plain_params = os.path.join(tmp, "params"), os.path.join(tmp, "plain-params")
            recorded = record(out, 3, [PY, EXAMPLE] + job + ["--params-out", params])
            js = os.path.join(tmp, "r.json")
            res = subprocess.run([DDPSCOPE, "report", "-q", os.path.join(out, "run.db"),
                                  "--json", js], capture_output=True, text=True)
            self.assertEqual(res.returncode, 0, res.stderr)
            with open(js) as f:
                report = json.load(f)
            late = {r["rank"]: r["iteration_late_ms_median"] for r in report["ranks"]}
            self.assertGreater(late[2], 20, late)
            self.assertLess(max(late[0], late[1]), 10, late)
            self.assertIn("rank 2", [r["setting"] for r in report["recommendations"]])
            heat = report["lateness"]
            self.assertEqual(len(heat), 3)
            steady = heat[2][2:]
            self.assertGreater(sum(steady) / len(steady), 20)
            # A late rank changes timing, never the result.
            plain_out, codes = run_plain(3, job + ["--params-out", plain_params])
            self.assertEqual(codes, [0] * 3)
            self.assertEqual(recorded.stdout, plain_out)
            assert_unperturbed(self, params, plain_params, 3)


class RecordExitStatus(unittest.TestCase):
    def test_single_command_status_passes_through(self):
        with tempfile.TemporaryDirectory() as tmp:
            res = record(os.path.join(tmp, "r"), 0, ["sh", "-c", "echo hello; exit 3"], check=False)
            self.assertEqual(res.returncode, 3)
            self.assertEqual(res.stdout, "hello\n")

    def test_first_failing_rank_status(self):
        code = "import os, sys, time; r = int(os.environ['RANK']); time.sleep(0.2 * r); sys.exit(5 if r == 1 else 0)"
        with tempfile.TemporaryDirectory() as tmp:
            res = record(os.path.join(tmp, "r"), 3, [PY, "-c", code], check=False)
            self.assertEqual(res.returncode, 5)

    def test_rank_environment(self):
        code = ("import os; e = os.environ; os.write(1, ' '.join([e['RANK'], e['WORLD_SIZE'], "
                "e['LOCAL_RANK'], e['MASTER_ADDR'], str('ddpscope_inject' in e['LD_PRELOAD'])]).encode() + b'\\n')")
        with tempfile.TemporaryDirectory() as tmp:
            res = record(os.path.join(tmp, "r"), 2, [PY, "-c", code])
            self.assertEqual(sorted(res.stdout.splitlines()),
                             ["0 2 0 127.0.0.1 True", "1 2 1 127.0.0.1 True"])

    def test_unwritable_output_one_warning(self):
        res = record("/proc/ddpscope-cannot-write", 0, ["sh", "-c", "echo out; exit 4"], check=False)
        self.assertEqual(res.returncode, 4)
        self.assertEqual(res.stdout, "out\n")
        self.assertEqual(len(res.stderr.splitlines()), 1, res.stderr)
        self.assertTrue(res.stderr.startswith("ddpscope: cannot write to /proc/ddpscope-cannot-write"))

    def test_existing_recording_is_not_overwritten(self):
        with tempfile.TemporaryDirectory() as tmp:
            open(os.path.join(tmp, "run.db"), "w").write("keep me")
            res = record(tmp, 0, ["true"], check=False)
            self.assertEqual(res.returncode, 2)
            self.assertIn("already holds a recording", res.stderr)
            self.assertEqual(open(os.path.join(tmp, "run.db")).read(), "keep me")


class Interrupt(unittest.TestCase):
    SCRIPT = """
import os, sys, time, torch, torch.distributed as dist
dist.init_process_group("gloo")
for _ in range(5):
    dist.all_reduce(torch.ones(1000))
print("ready", flush=True)
time.sleep(60)
"""

    def test_ctrl_c_keeps_the_record_and_pythons_own_handling(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "r")
            proc = subprocess.Popen([DDPSCOPE, "record", "-o", out, "--nproc", "1", "--", PY,
                                     "-c", self.SCRIPT], stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True)
            self.assertEqual(proc.stdout.readline(), "ready\n")
            proc.send_signal(signal.SIGINT)  # forwarded by record to the rank
            _, err = proc.communicate(timeout=60)
            self.assertIn("KeyboardInterrupt", err)  # Python's own handling still happened
            self.assertNotEqual(proc.returncode, 0)
            self.assertEqual(allreduce_sizes(os.path.join(out, "run.db"), 0), [4000] * 5)


class BadInput(unittest.TestCase):
    def expect_usage_error(self, argv, fragment):
        res = subprocess.run([DDPSCOPE] + argv, capture_output=True, text=True)
        self.assertEqual(res.returncode, 2, res.stderr)
        self.assertEqual(len(res.stderr.strip().splitlines()), 1, res.stderr)
        self.assertIn(fragment, res.stderr)
        return res

    def test_bad_files(self):
        with tempfile.TemporaryDirectory() as tmp:
            text = os.path.join(tmp, "notes.db")
            open(text, "w").write("not a database\n" * 100)
            self.expect_usage_error(["report", text], "not an SQLite database")
            foreign = os.path.join(tmp, "foreign.db")
            con = sqlite3.connect(foreign)
            con.execute("CREATE TABLE x(y)")
            con.commit()
            con.close()
            self.expect_usage_error(["report", foreign], "not one written by ddpscope")
            self.expect_usage_error(["report", os.path.join(tmp, "missing.db")], "no such file")
            self.expect_usage_error(["merge", tmp], "no rank-*.db files")
            os.rename(text, os.path.join(tmp, "rank-0.db"))
            self.expect_usage_error(["merge", tmp], "rank-0.db: not an SQLite database")
            self.assertFalse(os.path.exists(os.path.join(tmp, "run.db")))

    def test_bad_flags(self):
        self.expect_usage_error(["record", "--nproc", "two", "--", "true"], "nproc")
        self.expect_usage_error(["record"], "command")
        self.expect_usage_error(["frobnicate"], "frobnicate")


if __name__ == "__main__":
    unittest.main(verbosity=2)
