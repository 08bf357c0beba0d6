#!/usr/bin/env python3
"""`report` on a part of a run, and the progress line, through the real binary.

The run: 16 ranks x 40 iterations of a DDP-like GPU job (10 buckets, one
straggler, rank 3), written by bench_gen_rank_files through the store's
writer and merged by `ddpscope merge`. Checked:
- `--ranks` and `--iterations` keep exactly the collectives of those ranks and
  iterations (ranks x iterations x 10) in the analysis, the JSON and the
  trace (the trace honours the part too);
- `--iterations` past the last iteration is one line naming the flag, exit 2;
- `report DIR` reads the rank files together, unmerged: every output (the
  terminal's, JSON, CSV, HTML, trace) equals the merged run's, byte for byte
  but the run's name, for the whole run and for parts, straggler named;
  and under a soft limit of 12 open files (report raises it);
- on a terminal (a pty) merge and report draw a progress line on stderr and
  clear it; through a pipe stderr carries no progress at all.
"""
import json
import os
import pty
import resource
import re
import subprocess
import sys
import tempfile
import unittest

DDPSCOPE = os.environ["DDPSCOPE_BIN"]
GENERATOR = os.environ["GEN_RANK_FILES_BIN"]
RANKS, ITERATIONS, BUCKETS = 16, 40, 10


def run(*argv):
    return subprocess.run([DDPSCOPE, *argv], capture_output=True, text=True)


def on_terminal(*argv):
    """Runs with stderr on a pty: (exit code, stdout, what the terminal got)."""
    master, slave = pty.openpty()
    p = subprocess.Popen([DDPSCOPE, *argv], stdout=subprocess.PIPE, stderr=slave)
    os.close(slave)
    seen = b""
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # the child closed its end
            break
        if not data:
            break
        seen += data
    out = p.stdout.read().decode()
    p.wait()
    os.close(master)
    return p.returncode, out, seen.decode()


class ReportParts(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.dir = os.path.join(cls.tmp.name, "ranks")
        subprocess.run([GENERATOR, "--dir", cls.dir, "--ranks", str(RANKS), "--iterations",
                        str(ITERATIONS)], check=True, capture_output=True)
        cls.run_db = os.path.join(cls.tmp.name, "run.db")
        cls.merge = on_terminal("merge", cls.dir, "-o", cls.run_db)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def report_json(self, *flags):
        out = os.path.join(self.tmp.name, "part.json")
        trace = os.path.join(self.tmp.name, "part.trace.json")
        r = run("report", "-q", self.run_db, "--json", out, "--trace", trace, *flags)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out) as f, open(trace) as t:
            return json.load(f), json.load(t)

    def collectives_by_rank(self, report):
        calls = {}
        for rank in report["ranks"]:
            calls[rank["rank"]] = rank["collectives"]
        return calls

    def trace_collectives(self, trace):
        pids = {}
        for e in trace["traceEvents"]:
            if e.get("ph") == "X" and e.get("cat") == "nccl":
                pids[e["pid"]] = pids.get(e["pid"], 0) + 1
        return pids

    def test_whole_run(self):
        report, trace = self.report_json()
        self.assertEqual(self.collectives_by_rank(report),
                         {r: ITERATIONS * BUCKETS for r in range(RANKS)})
        self.assertEqual(report["iterations"]["count"], ITERATIONS)
        self.assertEqual(self.trace_collectives(trace), {r: ITERATIONS * BUCKETS for r in range(RANKS)})

    def test_ranks(self):
        report, trace = self.report_json("--ranks", "2-4,9")
        want = {r: ITERATIONS * BUCKETS for r in (2, 3, 4, 9)}
        self.assertEqual(self.collectives_by_rank(report), want)
        self.assertEqual(self.trace_collectives(trace), want)

    def test_iterations(self):
        report, trace = self.report_json("--iterations", "10-19", "--ranks", "0-7")
        want = {r: 10 * BUCKETS for r in range(8)}
        self.assertEqual(self.collectives_by_rank(report), want)
        self.assertEqual(report["iterations"]["count"], 10)
        self.assertEqual(report["iterations"]["warmup"], 0)
        self.assertEqual(self.trace_collectives(trace), want)
        # The straggler is still the one named in the part.
        self.assertIn("rank 3", " ".join(r["setting"] for r in report["recommendations"]))

    def test_first_iterations(self):
        report, _ = self.report_json("--iterations", "0-2")
        self.assertEqual(self.collectives_by_rank(report), {r: 3 * BUCKETS for r in range(RANKS)})

    def test_iterations_the_run_lacks(self):
        r = run("report", self.run_db, "--iterations", "30-45")
        self.assertEqual(r.returncode, 2)
        self.assertEqual(r.stderr, "ddpscope: --iterations 30-45: rank 0 has iterations 0 to 39\n")
        r = run("report", self.run_db, "--iterations", "5-x")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--iterations 5-x: 'x' is not an iteration (0 to ", r.stderr)

    def test_part_is_named_on_the_terminal(self):
        r = run("report", self.run_db, "--iterations", "10-19", "--ranks", "2-5,9")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stdout, r"part       iterations 10-19 of rank 2: ranks 2-5,9, "
                                   r"[0-9.]+ s to [0-9.]+ s after the start\n")

    def every_output(self, run_path, name, *flags):
        """What `report` writes of run_path, file by file, its name made RUN."""
        out = os.path.join(self.tmp.name, name)
        os.makedirs(out, exist_ok=True)
        r = run("report", run_path, "--json", f"{out}/r.json", "--csv", f"{out}/csv", "--html",
                f"{out}/r.html", "--trace", f"{out}/r.trace.json", *flags)
        self.assertEqual(r.returncode, 0, r.stderr)
        files = {"terminal": r.stdout}
        for root, _, names in os.walk(out):
            for n in names:
                with open(os.path.join(root, n)) as f:
                    files[os.path.relpath(os.path.join(root, n), out)] = f.read()
        return {k: v.replace(run_path, "RUN") for k, v in files.items()}

    def test_rank_files_read_together_report_as_merged(self):
        for flags in [(), ("--ranks", "2-4,9"), ("--iterations", "10-19", "--ranks", "0-7")]:
            with self.subTest(flags=flags):
                merged = self.every_output(self.run_db, "merged", *flags)
                unmerged = self.every_output(self.dir, "unmerged", *flags)
                self.assertEqual(sorted(unmerged), sorted(merged))
                for name in merged:
                    self.assertEqual(unmerged[name], merged[name], name)
                recs = json.loads(unmerged["r.json"])["recommendations"]
                self.assertIn("rank 3", " ".join(r["setting"] for r in recs))  # the straggler

    def test_rank_files_past_the_open_files_soft_limit(self):
        """16 rank files open at once under a soft limit of 12 open files:
        report raises it toward the hard limit, as any user may."""
        def low_limit():
            resource.setrlimit(resource.RLIMIT_NOFILE,
                               (12, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
        out = os.path.join(self.tmp.name, "low-limit.json")
        r = subprocess.run([DDPSCOPE, "report", "-q", self.dir, "--json", out],
                           capture_output=True, text=True, preexec_fn=low_limit)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out) as f:
            self.assertEqual(len(json.load(f)["ranks"]), RANKS)

    def test_progress_line_on_a_terminal_only(self):
        code, out, tty = self.merge
        self.assertEqual(code, 0, tty)
        self.assertIn("merged 16 ranks", out)
        self.assertIn("\rddpscope: merge: rank files", tty.replace("\x1b[K", ""))
        self.assertTrue(tty.endswith("\r\x1b[K"), repr(tty[-80:]))  # cleared at the end
        code, out, tty = on_terminal("report", self.run_db, "--trace",
                                     os.path.join(self.tmp.name, "t.json"))
        self.assertEqual(code, 0, tty)
        lines = tty.replace("\x1b[K", "")
        for stage in ("analysis: collectives", "analysis: ranks", "trace: events"):
            self.assertIn("ddpscope: " + stage, lines)
        self.assertIn("wrote", tty.split("\r")[-2] + tty.split("\r")[-1])
        self.assertNotIn("ddpscope: analysis", out)  # the report itself is clean
        # Through a pipe: the "wrote" line and nothing else.
        r = run("report", "-q", self.run_db, "--trace", os.path.join(self.tmp.name, "t.json"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(re.fullmatch(r"ddpscope: wrote \S+ \([^)]*\)\n", r.stderr), r.stderr)


if __name__ == "__main__":
    unittest.main()
