#!/usr/bin/env python3
"""Watching a running job: `record --metrics-file` and the live line
(docs/watching.md), on real 3-rank Gloo DDP jobs (examples/ddp_train.py).

- Metrics: under `--metrics-file F --metrics-every 1` the file appears while
  the job runs and parses (prometheus_client's own text parser, not a regex)
  then and at the end; it holds every per-rank series for each of the 3
  ranks and the bucket series for each of DDP's buckets; its bucket times
  equal, within 10 %, what `report --json --since --until` says of the same
  window of the merged run; every rank's step count is the job's; and the
  trained parameters equal those of the job run without ddpscope, bit for bit.
- Piped: with `--live-every 1` stderr gets plain lines with the figures and
  not one control character; without it, none.
- Bad input: each bad flag is one line, exit 2, and the job never starts.

Run by each torch Python (tests/torch_pythons.cmake); the parser runs under
the repo's .venv Python, where scripts/setup.sh installs prometheus_client.
"""
import json
import os
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
from ddp_jobs import digests, run_plain  # noqa: E402

DDPSCOPE = os.environ.get("DDPSCOPE_BIN", os.path.join(ROOT, "build", "ddpscope"))
TRAIN = os.path.join(ROOT, "examples", "ddp_train.py")
PARSER_PY = os.path.join(ROOT, ".venv", "bin", "python")
ITERS = 40
# 4 MB of gradients: several buckets under torch 1.13 too, whose first bucket
# takes 1 MiB whatever the cap; a job of a few seconds, a few metrics files.
JOB = ["--iters", str(ITERS), "--layers", "4", "--width", "512", "--bucket-cap-mb", "0.5"]
ENV = dict(os.environ, OMP_NUM_THREADS="1")
DEADLINE_S = 120  # for the first metrics file: a bound on a stuck test, not a timing

PARSE = r"""
import json, sys
from prometheus_client.parser import text_string_to_metric_families
out = []
for fam in text_string_to_metric_families(open(sys.argv[1]).read()):
    for s in fam.samples:
        out.append([fam.name, fam.type, s.name, s.labels, s.value])
print(json.dumps(out))
"""

RANK_SERIES = ["ddpscope_steps_total", "ddpscope_step_seconds", "ddpscope_comm_seconds_per_step",
               "ddpscope_exposed_comm_seconds_per_step", "ddpscope_late_seconds",
               "ddpscope_dropped_events_total"]
BUCKET_SERIES = ["ddpscope_bucket_seconds", "ddpscope_bucket_exposed_seconds",
                 "ddpscope_bucket_bus_bandwidth_bytes_per_second", "ddpscope_bucket_bytes"]


def parse(path):
    """Samples as {sample name: [(labels, value)]}, by the real parser."""
    r = subprocess.run([PARSER_PY, "-c", PARSE, path], capture_output=True, text=True)
    if r.returncode != 0:
        raise AssertionError(f"prometheus_client could not parse {path}: {r.stderr}")
    samples = {}
    for _, _, name, labels, value in json.loads(r.stdout):
        samples.setdefault(name, []).append((labels, value))
    return samples


def gauge(samples, name):
    return samples[name][0][1]


def record(out, flags, job_args=(), **kw):
    return subprocess.Popen(
        [DDPSCOPE, "record", "--nproc", "3", "-o", out, "--flush-ms", "100", *flags, "--",
         sys.executable, TRAIN, *JOB, *job_args],
        env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def report_window(out, samples):
    """report --json of the merged run over the metrics file's window."""
    end = gauge(samples, "ddpscope_window_end_timestamp_seconds")
    length = gauge(samples, "ddpscope_window_seconds")
    import sqlite3
    db = sqlite3.connect(os.path.join(out, "run.db"))
    start_ns = db.execute("SELECT min(start_ns) FROM processes").fetchone()[0]
    since = max(0.0, ((end - length) * 1e9 - start_ns) / 1e9)
    until = (end * 1e9 - start_ns) / 1e9
    path = os.path.join(out, "window.json")
    r = subprocess.run([DDPSCOPE, "report", "-q", os.path.join(out, "run.db"), "--json", path,
                        "--since", f"{since:.6f}", "--until", f"{until:.6f}"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    with open(path) as f:
        return json.load(f)


class Metrics(unittest.TestCase):
    def test_metrics_file_matches_the_report_parameters_unchanged(self):
        with tempfile.TemporaryDirectory(prefix="ddpscope-live-") as tmp:
            out, prom = os.path.join(tmp, "rec"), os.path.join(tmp, "job.prom")
            proc = record(out, ["--metrics-file", prom, "--metrics-every", "1"],
                          ["--params-out", os.path.join(tmp, "rec-params")])
            deadline = time.monotonic() + DEADLINE_S
            while not os.path.exists(prom) and proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.05)
            running = proc.poll() is None
            mid = os.path.join(tmp, "mid.prom")
            if os.path.exists(prom):
                shutil.copy(prom, mid)
            stdout, stderr = proc.communicate(timeout=300)
            self.assertEqual(proc.returncode, 0, stderr)
            self.assertTrue(running and os.path.exists(mid),
                            "no metrics file while the job ran")
            self.assertIn("ddpscope_window_seconds", parse(mid))

            samples = parse(prom)
            for name in RANK_SERIES:
                ranks = sorted(int(labels["rank"]) for labels, _ in samples[name])
                self.assertEqual(ranks, [0, 1, 2], name)
                for labels, _ in samples[name]:
                    self.assertEqual(labels["job"], "rec")
                    self.assertTrue(labels["host"])
            self.assertEqual([v for _, v in samples["ddpscope_steps_total"]], [ITERS] * 3)

            rep = report_window(out, samples)
            want = {b["index"]: b["median_us"] for b in rep["buckets"]}
            self.assertGreaterEqual(len(want), 2)
            for name in BUCKET_SERIES:
                got = sorted(int(labels["bucket"]) for labels, _ in samples[name])
                self.assertEqual(got, sorted(want), name)
            for labels, value in samples["ddpscope_bucket_seconds"]:
                self.assertEqual(labels["op"], "allreduce")
                expected = want[int(labels["bucket"])]
                self.assertLessEqual(abs(value * 1e6 - expected), 0.10 * expected,
                                     f"bucket {labels['bucket']}: {value * 1e6:.1f} us in the "
                                     f"metrics file, {expected:.1f} us in the report")

            plain = os.path.join(tmp, "plain-params")
            self.assertEqual(run_plain(TRAIN, JOB, 3, plain, ENV), [0, 0, 0])
            self.assertEqual(digests(os.path.join(tmp, "rec-params"), 3), digests(plain, 3))


class Piped(unittest.TestCase):
    def test_plain_lines_without_control_characters(self):
        with tempfile.TemporaryDirectory(prefix="ddpscope-live-") as tmp:
            proc = record(os.path.join(tmp, "rec"), ["--live-every", "1"])
            _, stderr = proc.communicate(timeout=300)
            self.assertEqual(proc.returncode, 0, stderr)
            lines = [l for l in stderr.splitlines() if l.startswith("ddpscope: step ")]
            self.assertTrue(any(" ms/step | comm " in l and "exposed" in l for l in lines),
                            stderr)
            self.assertFalse([c for c in stderr if c in "\r\x1b"], "control characters")

    def test_no_live_line_on_a_pipe_unless_asked(self):
        with tempfile.TemporaryDirectory(prefix="ddpscope-live-") as tmp:
            proc = record(os.path.join(tmp, "rec"), [], ["--iters", "10"])
            _, stderr = proc.communicate(timeout=300)
            self.assertEqual(proc.returncode, 0, stderr)
            self.assertNotIn("ddpscope: step ", stderr)


class BadInput(unittest.TestCase):
    def test_each_bad_flag_is_one_line_and_exit_2(self):
        with tempfile.TemporaryDirectory(prefix="ddpscope-live-") as tmp:
            cases = [(["--metrics-every", "0", "--metrics-file", os.path.join(tmp, "a.prom")],
                      "--metrics-every"),
                     (["--window", "0"], "--window"),
                     (["--live-every", "-1"], "--live-every"),
                     (["--metrics-file", os.path.join(tmp, "missing", "a.prom")], "missing")]
            for flags, named in cases:
                out = os.path.join(tmp, "rec")
                r = subprocess.run([DDPSCOPE, "record", "-o", out, *flags, "--", "true"],
                                   capture_output=True, text=True, timeout=60)
                self.assertEqual(r.returncode, 2, (flags, r.stderr))
                self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
                self.assertIn(named, r.stderr)
                self.assertFalse(os.path.exists(out), flags)


if __name__ == "__main__":
    ctest_unittest.main()
