#!/usr/bin/env python3
"""The metrics path as users run it: Debian's node_exporter reads `record
--metrics-file` through its textfile collector, and a Prometheus server
scrapes it every second with the shipped scrape settings (honor_labels) and
rules (contrib/prometheus), both on loopback. Two recorded jobs write into
the textfile folder: a 2-rank Gloo DDP job whose rank 1 sleeps in every step
(a straggler, exposed communication on rank 0) with a ring so small that
events are dropped, and a 2-rank FSDP2 job. Then, through the server's
HTTP API:

- every series of docs/watching.md's table is there, with its labels, and
  `job` is ddpscope's (the folder's name), not the scrape job's;
- the step counter rose while the job ran;
- the exposed communication per step the server holds is what the last
  file held;
- every expression of the shipped Grafana dashboard and every rule, alerts
  included (their planted conditions), returns data.

Runs the jobs under the Python it is run with (PyPI's torch: FSDP2). Without
prometheus, prometheus-node-exporter or this torch's FSDP2 it is Skipped.
"""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "support"))
import ctest_unittest  # noqa: E402

DDPSCOPE = os.environ.get("DDPSCOPE_BIN", os.path.join(ROOT, "build", "ddpscope"))
PY = sys.executable
RULES = os.path.join(ROOT, "contrib", "prometheus", "ddpscope.rules.yml")
DASHBOARD = os.path.join(ROOT, "contrib", "grafana", "ddpscope.json")
PROMETHEUS, NODE_EXPORTER = shutil.which("prometheus"), shutil.which("prometheus-node-exporter")
DEADLINE_S = 60  # for a server to start or a scrape to land: a bound on a stuck test
JOB_ENV = dict(os.environ, OMP_NUM_THREADS="1", PYTHONUNBUFFERED="1")

# docs/watching.md's series, and the labels each carries.
RANK_SERIES = ("ddpscope_steps_total", "ddpscope_step_seconds", "ddpscope_comm_seconds_per_step",
               "ddpscope_exposed_comm_seconds_per_step", "ddpscope_late_seconds",
               "ddpscope_dropped_events_total")
BUCKET_SERIES = ("ddpscope_bucket_seconds", "ddpscope_bucket_exposed_seconds",
                 "ddpscope_bucket_bus_bandwidth_bytes_per_second", "ddpscope_bucket_bytes")
FSDP_RANK_SERIES = ("ddpscope_fsdp_comm_seconds_per_step",
                    "ddpscope_fsdp_exposed_comm_seconds_per_step")
FSDP_UNIT_SERIES = ("ddpscope_fsdp_unit_exposed_seconds_per_step", "ddpscope_fsdp_unit_seconds",
                    "ddpscope_fsdp_unit_calls_per_step", "ddpscope_fsdp_unit_bytes",
                    "ddpscope_fsdp_unit_bus_bandwidth_bytes_per_second")
JOB_SERIES = ("ddpscope_window_seconds", "ddpscope_window_end_timestamp_seconds",
              "ddpscope_rank_files", "ddpscope_rank_files_unreadable", "ddpscope_refresh_seconds")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def has_fsdp2():
    probe = "import torch.distributed.fsdp as f; f.fully_shard"
    return subprocess.run([PY, "-c", probe], capture_output=True).returncode == 0


def file_value(path, name, **labels):
    """The value of the one sample of `name` in an exposition file whose
    labels include `labels`."""
    found = []
    with open(path) as f:
        lines = f.read().splitlines()
    for line in lines:
        m = re.match(r"^(\w+)\{([^}]*)\} (\S+)$", line.strip())
        if not m or m.group(1) != name:
            continue
        have = dict(re.findall(r'(\w+)="([^"]*)"', m.group(2)))
        if all(have.get(k) == str(v) for k, v in labels.items()):
            found.append(float(m.group(3)))
    assert len(found) == 1, f"{name} {labels}: {len(found)} samples in {path}"
    return found[0]


class Server:
    """node_exporter and Prometheus on loopback ports of their own."""

    def __init__(self, tmp):
        self.textfiles = os.path.join(tmp, "textfile")
        os.makedirs(self.textfiles)
        node_port, self.port = free_port(), free_port()
        config = os.path.join(tmp, "prometheus.yml")
        with open(config, "w") as f:
            f.write(f"""global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files: ["{RULES}"]
scrape_configs:
  - job_name: node
    honor_labels: true
    static_configs:
      - targets: ["127.0.0.1:{node_port}"]
""")
        self.logs = [open(os.path.join(tmp, name), "w") for name in ("node.log", "prom.log")]
        self.procs = [
            subprocess.Popen([NODE_EXPORTER, f"--web.listen-address=127.0.0.1:{node_port}",
                              "--collector.disable-defaults", "--collector.textfile",
                              f"--collector.textfile.directory={self.textfiles}"],
                             stdout=subprocess.DEVNULL, stderr=self.logs[0]),
            subprocess.Popen([PROMETHEUS, f"--config.file={config}",
                              f"--storage.tsdb.path={os.path.join(tmp, 'tsdb')}",
                              f"--web.listen-address=127.0.0.1:{self.port}"],
                             stdout=subprocess.DEVNULL, stderr=self.logs[1]),
        ]

    def get(self, path, **params):
        url = f"http://127.0.0.1:{self.port}{path}"
        if params:
            url += "?" + urllib.parse.urlencode(params, doseq=True)
        with urllib.request.urlopen(url, timeout=10) as r:
            return json.load(r) if path.startswith("/api/") else r.read()

    def query(self, expr, at=None):
        params = {"query": expr}
        if at is not None:
            params["time"] = at
        out = self.get("/api/v1/query", **params)
        assert out["status"] == "success", out
        return out["data"]["result"]

    def wait(self, what, ready):
        deadline = time.monotonic() + DEADLINE_S
        while time.monotonic() < deadline:
            try:
                if ready():
                    return
            except OSError:
                pass
            time.sleep(0.25)
        raise AssertionError(f"{what} within {DEADLINE_S} s")

    def stop(self):
        for p in self.procs:
            p.terminate()
        for p in self.procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        for f in self.logs:
            f.close()


def dashboard_exprs():
    with open(DASHBOARD) as f:
        d = json.load(f)
    for panel in d["panels"]:
        for t in panel["targets"]:
            # Grafana's variables, as Grafana would fill them for "All".
            yield panel["title"], t["expr"].replace("$job", ".+").replace("$__rate_interval", "1m")


def rule_exprs():
    """Each rule's (name, expr) from the shipped file (a plain YAML subset:
    `- record:`/`- alert:` then `expr:` lines)."""
    name = None
    with open(RULES) as f:
        lines = f.read().splitlines()
    for line in lines:
        m = re.match(r"^\s*- (record|alert): (\S+)", line)
        if m:
            name = m.group(2)
        m = re.match(r"^\s*expr: (.+)$", line)
        if m and name:
            yield name, m.group(1).strip()
            name = None


@unittest.skipUnless(PROMETHEUS and NODE_EXPORTER,
                     "needs Debian's prometheus and prometheus-node-exporter")
class Scraped(unittest.TestCase):
    def setUp(self):
        if not has_fsdp2():
            self.skipTest(f"{PY}'s torch has no FSDP2 (fully_shard)")

    def record(self, tmp, name, prom, job, flags=(), extra_env=()):
        out = os.path.join(tmp, name)
        cmd = [DDPSCOPE, "record", "--nproc", "2", "-o", out, "--metrics-file",
               prom, "--metrics-every", "1", "--window", "30", *flags, "--", PY, *job]
        env = dict(JOB_ENV, **dict(extra_env))
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env)
        self.assertEqual(res.returncode, 0, res.stdout + res.stderr)
        return out

    def test_series_counter_exposed_and_every_expression(self):
        with tempfile.TemporaryDirectory(prefix="ddpscope-prom-") as tmp:
            server = Server(tmp)
            try:
                server.wait("Prometheus ready", lambda: server.get("/-/ready") is not None)
                self.check(server, tmp)
            finally:
                server.stop()

    def check(self, server, tmp):
        ddp_prom = os.path.join(server.textfiles, "ddp.prom")
        began = time.time()
        # Rank 1 sleeps 100 ms a step, several times the step's compute even
        # on a loaded machine: it enters every all-reduce late and rank 0
        # waits, exposed. A ring of 64 events flushed every 2 s drops (ten
        # buckets a step on the backend's thread).
        self.record(tmp, "ddp-run", ddp_prom,
                    [os.path.join(ROOT, "examples", "ddp_train.py"), "--iters", "150",
                     "--layers", "4", "--width", "256", "--bucket-cap-mb", "0.1",
                     "--sleep-ms", "100", "--sleep-rank", "1"],
                    ["--flush-ms", "2000"], {"DDPSCOPE_BUFFER_EVENTS": "64"})
        ended = time.time()
        self.record(tmp, "fsdp-run", os.path.join(server.textfiles, "fsdp.prom"),
                    [os.path.join(ROOT, "examples", "fsdp_train.py"), "--iters", "60",
                     "--blocks", "3"])
        # The last files are written when each job ends: wait for a scrape
        # that holds them (the FSDP job's series appear only then).
        server.wait("a scrape of both jobs' last files", lambda: server.query(
            'count(ddpscope_fsdp_unit_bytes{job="fsdp-run"}) > 0 and '
            f'count(timestamp(ddpscope_steps_total{{job="ddp-run"}}) > {ended}) > 0'))

        self.check_series(server)
        self.check_counter(server, began, ended)
        for rank in (0, 1):
            held = file_value(ddp_prom, "ddpscope_exposed_comm_seconds_per_step", job="ddp-run",
                              rank=rank)
            got = server.query(f'ddpscope_exposed_comm_seconds_per_step{{job="ddp-run",rank="{rank}"}}')
            self.assertEqual(len(got), 1, got)
            self.assertEqual(float(got[0]["value"][1]), held)
        empty = [f"{where}: {expr}" for where, expr in list(dashboard_exprs()) + list(rule_exprs())
                 if not server.query(expr)]
        self.assertEqual(empty, [], "expressions that returned no data")

    def check_series(self, server):
        labels = {}
        for s in server.get("/api/v1/series", **{"match[]": '{__name__=~"ddpscope_.+"}'})["data"]:
            labels.setdefault(s["__name__"], []).append(s)
        for names, keys in ((RANK_SERIES, {"job", "rank", "host"}),
                            (BUCKET_SERIES, {"job", "ddp", "bucket", "op"}),
                            (FSDP_RANK_SERIES, {"job", "rank", "host"}),
                            (FSDP_UNIT_SERIES, {"job", "root", "unit", "phase", "op"}),
                            (JOB_SERIES, {"job"})):
            for name in names:
                self.assertIn(name, labels)
                for s in labels[name]:
                    self.assertTrue(keys <= set(s), f"{name}: {s}")
                    # honor_labels: ddpscope's job, never renamed exported_job.
                    self.assertIn(s["job"], ("ddp-run", "fsdp-run"), s)
                    self.assertNotIn("exported_job", s)
        ranks = {s["rank"] for s in labels["ddpscope_steps_total"] if s["job"] == "ddp-run"}
        self.assertEqual(ranks, {"0", "1"})

    def check_counter(self, server, began, ended):
        out = server.get("/api/v1/query_range", query='ddpscope_steps_total{job="ddp-run"}',
                         start=began, end=ended + 5, step=1)["data"]["result"]
        self.assertEqual(len(out), 2, out)
        for series in out:
            steps = [float(v) for _, v in series["values"]]
            self.assertEqual(steps, sorted(steps), "the counter went down")
            self.assertGreater(steps[-1], steps[0], "the counter never rose while the job ran")
            self.assertGreater(len(set(steps)), 2, f"fewer than three counts scraped: {steps}")


if __name__ == "__main__":
    ctest_unittest.main()
