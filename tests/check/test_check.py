#!/usr/bin/env python3
"""`ddpscope check` end to end on real runs.

Recorded runs: the example DDP job (examples/ddp_train.py, 2 CPU ranks, Gloo)
recorded as a baseline three times, interleaved with three identical reruns;
each rerun checked against the baseline must pass. The same job on a
bandwidth-limited network (a network namespace whose loopback a tbf qdisc
holds to 50 Mbit/s) must fail, naming communication per iteration; a far
smaller bucket size is reported as a changed bucket layout. Tuner results:
identical tuner reruns pass; the same sweep with the loopback bandwidth
limited must fail, naming the setting's iteration time. Mismatched, corrupt
and unusable databases exit 2 with one line naming the file. Every JUnit file
is parsed with a real XML parser (and xmllint where installed). Recording
changes no trained parameter: every interleaved run ends with the parameters of
the same job run without ddpscope.

The recorded runs use the Python that runs this file (sys.executable): each torch
Python of tests/torch_pythons.cmake runs them once.
"""
import json
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import unittest
import uuid
import xml.etree.ElementTree as ET

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "support"))
from ddp_jobs import digests as params_digests  # noqa: E402
DDPSCOPE = os.environ.get("DDPSCOPE_BIN", os.path.join(ROOT, "build", "ddpscope"))
EXAMPLE = os.path.join(ROOT, "examples", "ddp_train.py")
TORCH_PY = sys.executable
ITERS = 30
RERUN_TOLERANCE_PCT = 25
# Three baseline runs and three reruns of the same job, in this order (each
# run is a torch job started anew: 7 s here, and the test runs alone).
INTERLEAVED = ["base0", "rerun0", "base1", "rerun1", "base2", "rerun2"]


def check(*args):
    return subprocess.run([DDPSCOPE, "check", *args], capture_output=True, text=True, timeout=600)


def parse_junit(path):
    """The JUnit file as CI systems read it: well-formed XML, totals that add up."""
    root = ET.parse(path).getroot()
    if shutil.which("xmllint"):
        res = subprocess.run(["xmllint", "--noout", path], capture_output=True, text=True)
        assert res.returncode == 0, res.stderr
    assert root.tag == "testsuites", root.tag
    cases = root.findall("./testsuite/testcase")
    assert int(root.get("tests")) == len(cases)
    for suite in root.findall("testsuite"):
        assert int(suite.get("tests")) == len(suite.findall("testcase"))
        assert int(suite.get("failures")) == len(suite.findall("testcase/failure"))
    return {c.get("name"): c for c in cases}


def failed_names(cases):
    return sorted(name for name, c in cases.items() if c.find("failure") is not None)


class LimitedLoopback:
    """A network namespace whose loopback is held to `rate` by a tbf qdisc.

    Gloo's ranks talk over 127.0.0.1, so a command run inside it (`ip netns
    exec NAME ...`) has its all-reduces bandwidth-limited, and nothing outside
    it is touched. Needs root and iproute2 with tc.
    """

    def __init__(self, rate):
        self.name = f"ddpscope-check-{uuid.uuid4().hex[:8]}"
        self.rate = rate

    @staticmethod
    def available():
        return os.geteuid() == 0 and shutil.which("ip") and shutil.which("tc")

    def __enter__(self):
        steps = [["ip", "netns", "add", self.name],
                 ["ip", "netns", "exec", self.name, "ip", "link", "set", "lo", "up"],
                 ["ip", "netns", "exec", self.name, "tc", "qdisc", "add", "dev", "lo", "root",
                  "tbf", "rate", self.rate, "burst", "1mb", "latency", "100ms"]]
        for step in steps:
            res = subprocess.run(step, capture_output=True, text=True)
            if res.returncode != 0:
                self.__exit__()
                raise unittest.SkipTest(f"cannot limit loopback bandwidth: {res.stderr.strip()}")
        return ["ip", "netns", "exec", self.name]

    def __exit__(self, *exc):
        subprocess.run(["ip", "netns", "delete", self.name], capture_output=True)


def job_env():
    # One intra-op thread per rank, as bench/ddp_slowdown.sh does: two ranks
    # of torch's default two threads each oversubscribe this 2-core machine,
    # and that contention alone moves a run's bucket times by a factor of 3.
    return dict(os.environ, OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"))


def job_args(bucket_cap_mb, params_dir):
    # --ddp-log beside the parameter digests: DDP's own account of its buckets.
    return [EXAMPLE, "--iters", str(ITERS), "--bucket-cap-mb", str(bucket_cap_mb),
            "--params-out", params_dir, "--ddp-log", params_dir]


def ddp_bucket_count(tmp, name):
    """How many buckets DDP itself used per iteration in recorded run NAME."""
    with open(os.path.join(tmp, name + "-params", "ddp-rank0.json")) as f:
        return len(json.load(f)["rebuilt_bucket_sizes"])


def run_plain(params_dir, nproc=2, bucket_cap_mb=25.0):
    """The same job without ddpscope, launched the way torchrun would."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = str(s.getsockname()[1])
    procs = []
    for r in range(nproc):
        env = dict(job_env(), RANK=str(r), LOCAL_RANK=str(r), WORLD_SIZE=str(nproc),
                   LOCAL_WORLD_SIZE=str(nproc), MASTER_ADDR="127.0.0.1", MASTER_PORT=port)
        procs.append(subprocess.Popen([TORCH_PY, *job_args(bucket_cap_mb, params_dir)], env=env,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True))
    errs = [p.communicate(timeout=600)[1] for p in procs]
    assert [p.returncode for p in procs] == [0] * nproc, errs
    return params_digests(params_dir, nproc)


class RecordedRuns(unittest.TestCase):
    def record(self, tmp, name, bucket_cap_mb=25.0, nproc=2, prefix=()):
        """Records the job; returns its run.db and its ranks' parameter digests."""
        out = os.path.join(tmp, name)
        params = os.path.join(tmp, name + "-params")
        cmd = [*prefix, DDPSCOPE, "record", "-o", out, "--nproc", str(nproc), "--", TORCH_PY,
               *job_args(bucket_cap_mb, params)]
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=job_env())
        self.assertEqual(res.returncode, 0, res.stderr)
        return os.path.join(out, "run.db"), params_digests(params, nproc)

    def check_rank_files_as_merged(self, baseline, candidate):
        def side(runs):
            return ",".join(runs)
        dirs = [os.path.dirname(r) for r in baseline]
        merged = check("--baseline", side(baseline), "--candidate", candidate,
                       "--tolerance", str(RERUN_TOLERANCE_PCT))
        ranks = check("--baseline", side(dirs), "--candidate", os.path.dirname(candidate),
                      "--tolerance", str(RERUN_TOLERANCE_PCT))
        self.assertEqual(ranks.returncode, merged.returncode, ranks.stdout + ranks.stderr)
        self.assertIn("no regression", ranks.stdout)
        named = merged.stdout
        for run in [*baseline, candidate]:
            named = named.replace(run, os.path.dirname(run))
        self.assertEqual(ranks.stdout, named)

    def test_reruns_pass_and_slow_network_fails(self):
        with tempfile.TemporaryDirectory() as tmp:
            # Baseline runs interleaved with the reruns, as CI keeps baselines from
            # different pipelines: they sample how the shared machine's load
            # moves while the test runs (other jobs start and stop).
            baseline, reruns = [], []
            plain = run_plain(os.path.join(tmp, "plain-params"))
            self.assertEqual(plain, [plain[0]] * 2, "DDP replicas diverged without ddpscope")
            for name in INTERLEAVED:
                run, digests = self.record(tmp, name)
                self.assertEqual(digests, plain, f"{name}: recording changed the training")
                (baseline if name.startswith("base") else reruns).append(run)
            base_args = ["--baseline", ",".join(baseline)]
            # This 2-core VM's run-to-run spread is heavy-tailed (docs/ci.md:
            # exposed communication ±43-173 %): three baseline runs can agree
            # within ±6 % and a fourth identical run still move +82 % (seen in a
            # fresh-clone suite run: interval +7.3 % .. +218 %). A rerun is one
            # candidate run, so, as docs/ci.md advises for a noisy runner, the
            # reruns are held to a 25 % tolerance; the slow network below (several
            # times slower) is held to the default 5 %.
            for i, rerun in enumerate(reruns):
                junit = os.path.join(tmp, f"rerun{i}.xml")
                res = check(*base_args, "--candidate", rerun, "--junit", junit,
                            "--tolerance", str(RERUN_TOLERANCE_PCT))
                self.assertEqual(res.returncode, 0, f"rerun {i} flagged:\n{res.stdout}{res.stderr}")
                self.assertIn("no regression", res.stdout)
                cases = parse_junit(junit)
                self.assertEqual(failed_names(cases), [])
                self.assertIn("communication per iteration", cases)
                self.assertIn("exposed communication per iteration", cases)

            # The recordings' directories, their rank files read together
            # (no run.db), give the same verdict, figure for figure.
            self.check_rank_files_as_merged(baseline, reruns[0])

            # 0.05 MB buckets instead of 25: DDP gives every layer a bucket of its
            # own (torch 1.13 after a first 1 MB bucket: 2 -> 5; torch 2.15 caps
            # the first bucket at bucket_cap_mb too: 1 -> 8). A noise-free fact,
            # reported as changed whether or not this machine makes it slower.
            small, _ = self.record(tmp, "small-buckets", bucket_cap_mb=0.05)
            before, after = ddp_bucket_count(tmp, "base0"), ddp_bucket_count(tmp, "small-buckets")
            self.assertLess(before, after)
            res = check(*base_args, "--candidate", small)
            self.assertIn(res.returncode, (0, 1), res.stdout + res.stderr)
            self.assertIn(f"changed     buckets per iteration: {before} -> {after}", res.stdout)

            # Another world size is not a regression but bad input.
            three, _ = self.record(tmp, "three-ranks", nproc=3)
            three_xml = os.path.join(tmp, "three.xml")
            res = check(*base_args, "--candidate", three, "--junit", three_xml)
            self.assertEqual(res.returncode, 2, res.stdout + res.stderr)
            self.assertEqual(len(res.stderr.strip().splitlines()), 1, res.stderr)
            self.assertIn("world size 2", res.stderr)
            self.assertIn(three, res.stderr)
            self.assertFalse(os.path.exists(three_xml))

            if not LimitedLoopback.available():
                self.skipTest("reruns passed; the slow network needs root, ip and tc")
            # The same job on a network held to 50 Mbit/s: every all-reduce is
            # bandwidth-bound, communication per iteration several times longer.
            with LimitedLoopback("50mbit") as prefix:
                slow, digests = self.record(tmp, "slow-network", prefix=prefix)
            self.assertEqual(digests, plain, "a slow network changed the training")
            junit, md = os.path.join(tmp, "slow.xml"), os.path.join(tmp, "slow.md")
            res = check(*base_args, "--candidate", slow, "--junit", junit, "--markdown", md)
            self.assertEqual(res.returncode, 1, res.stdout + res.stderr)
            self.assertIn("regression  communication per iteration:", res.stdout)
            self.assertIn("communication per iteration", failed_names(parse_junit(junit)))
            with open(md) as f:
                summary = f.read()
            self.assertTrue(summary.startswith("### ddpscope check: communication regression"))
            self.assertIn("**communication per iteration:", summary)


def workload(path, name="check-small", tensors=16):
    """Gradients of 256 KiB each with some compute: a few MiB per iteration."""
    params = [{"name": f"layer{i}.weight", "numel": 65536, "dtype": "float32",
               "backward_us": 300.0} for i in range(tensors)]
    with open(path, "w") as f:
        json.dump({"name": name, "params": params, "forward_us": 2000, "optimizer_us": 500}, f)


def tune(db, wl, prefix=()):
    cmd = [*prefix, DDPSCOPE, "tune", "--workload", wl, "--backend", "gloo", "--nproc", "2",
           "--bucket-mb", "1,4", "--iters", "10", "--warmup", "2", "-o", db]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600)


class TunerResults(unittest.TestCase):
    def test_reruns_pass_and_bandwidth_limit_fails(self):
        with tempfile.TemporaryDirectory() as tmp:
            wl = os.path.join(tmp, "w.json")
            workload(wl)
            baseline = os.path.join(tmp, "base.db")
            reruns = []
            for name in ["base", "rerun0", "base", "rerun1", "base"]:  # interleaved, as above
                db = baseline if name == "base" else os.path.join(tmp, name + ".db")
                res = tune(db, wl)  # the baseline's runs are appended to one database
                self.assertEqual(res.returncode, 0, res.stderr)
                if db != baseline:
                    reruns.append(db)
            for i, rerun in enumerate(reruns):
                junit = os.path.join(tmp, f"rerun{i}.xml")
                # One candidate run on a noisy VM: the reruns' tolerance, as above.
                res = check("--baseline", baseline, "--candidate", rerun, "--junit", junit,
                            "--tolerance", str(RERUN_TOLERANCE_PCT))
                self.assertEqual(res.returncode, 0, f"rerun {i} flagged:\n{res.stdout}{res.stderr}")
                cases = parse_junit(junit)
                self.assertEqual(failed_names(cases), [])
                self.assertIn("gloo 1x2 bucket 4 MB: iteration", cases)
            if not LimitedLoopback.available():
                self.skipTest("reruns passed; the bandwidth limit needs root, ip and tc")
            slow = os.path.join(tmp, "slow.db")
            with LimitedLoopback("200mbit") as prefix:
                res = tune(slow, wl, prefix)
            self.assertEqual(res.returncode, 0, res.stderr)
            junit = os.path.join(tmp, "slow.xml")
            res = check("--baseline", baseline, "--candidate", slow, "--junit", junit)
            self.assertEqual(res.returncode, 1, res.stdout + res.stderr)
            failed = failed_names(parse_junit(junit))
            self.assertIn("gloo 1x2 bucket 4 MB: iteration", failed, res.stdout)
            self.assertIn("regression  gloo 1x2 bucket 4 MB: iteration:", res.stdout)


class BadInput(unittest.TestCase):
    def expect_error(self, args, *fragments, outputs=()):
        res = check(*args)
        self.assertEqual(res.returncode, 2, res.stdout + res.stderr)
        self.assertEqual(len(res.stderr.strip().splitlines()), 1, res.stderr)
        for fragment in fragments:
            self.assertIn(fragment, res.stderr)
        for path in outputs:
            self.assertFalse(os.path.exists(path), path)

    def tuner_db(self, tmp, name, workload_name="check-small", tensors=16):
        wl = os.path.join(tmp, name + ".json")
        workload(wl, workload_name, tensors)
        db = os.path.join(tmp, name + ".db")
        cmd = [DDPSCOPE, "tune", "--workload", wl, "--backend", "gloo", "--nproc", "2",
               "--bucket-mb", "4", "--iters", "6", "--warmup", "1", "-o", db]
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        self.assertEqual(res.returncode, 0, res.stderr)
        return db

    def test_mismatched_and_corrupt_databases(self):
        with tempfile.TemporaryDirectory() as tmp:
            good = self.tuner_db(tmp, "good")
            other = self.tuner_db(tmp, "other", workload_name="bigger", tensors=24)
            junit = os.path.join(tmp, "out.xml")
            md = os.path.join(tmp, "out.md")
            outs = ["--junit", junit, "--markdown", md]
            self.expect_error(["--baseline", good, "--candidate", other, *outs],
                              "not the same job", good, other, "workload", outputs=[junit, md])
            garbage = os.path.join(tmp, "garbage.db")
            with open(garbage, "wb") as f:
                f.write(b"this is not a database at all\n" * 100)
            self.expect_error(["--baseline", good, "--candidate", garbage, *outs], garbage,
                              outputs=[junit, md])
            foreign = os.path.join(tmp, "foreign.db")
            con = sqlite3.connect(foreign)
            con.execute("CREATE TABLE t(x)")
            con.commit()
            con.close()
            self.expect_error(["--baseline", foreign, "--candidate", good, *outs], foreign,
                              "not one written by ddpscope", outputs=[junit, md])
            truncated = os.path.join(tmp, "truncated.db")
            with open(good, "rb") as f:
                data = f.read()
            with open(truncated, "wb") as f:
                f.write(data[: len(data) // 3])
            self.expect_error(["--baseline", good, "--candidate", truncated, *outs], truncated,
                              outputs=[junit, md])
            missing = os.path.join(tmp, "missing.db")
            self.expect_error(["--baseline", missing, "--candidate", good], missing)
            # A ddpscope database with nothing to compare in it.
            empty = os.path.join(tmp, "empty.db")
            shutil.copy(good, empty)
            con = sqlite3.connect(empty)
            con.execute("DELETE FROM tune_results")
            con.execute("DELETE FROM tune_runs")
            con.commit()
            con.close()
            self.expect_error(["--baseline", good, "--candidate", empty], empty,
                              "neither a recorded run nor tuner results")

    def test_bad_flags(self):
        with tempfile.TemporaryDirectory() as tmp:
            db = self.tuner_db(tmp, "good")
            both = ["--baseline", db, "--candidate", db]
            self.expect_error([*both, "--tolerance", "-1"], "--tolerance")
            self.expect_error([*both, "--metric", "comm,latency"], "latency")
            self.expect_error([*both, "--min-samples", "1"], "--min-samples")
            self.expect_error(["--baseline", db], "--candidate")
            self.expect_error(["--baseline", f"{db},{db}", "--candidate", db], "given twice")
            unwritable = os.path.join(tmp, "no", "such", "dir", "out.xml")
            self.expect_error([*both, "--junit", unwritable], unwritable)
            # Sanity: the same database against itself is no regression.
            res = check(*both)
            self.assertEqual(res.returncode, 0, res.stdout + res.stderr)


if __name__ == "__main__":
    sys.path.insert(0, os.path.join(ROOT, "tests", "support"))
    import ctest_unittest  # noqa: E402  (exit 77 when skipped: ctest's "Skipped")

    ctest_unittest.main(argv=[sys.argv[0]] + sys.argv[1:])
