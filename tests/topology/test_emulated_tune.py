#!/usr/bin/env python3
"""`ddpscope tune --topology` end to end: sweeps on emulated clusters (network
namespaces, shaped links; needs root), cleanup after every way a run can end,
and the one-line errors for bad specs and for users who cannot emulate."""
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DDPSCOPE = os.path.abspath(os.environ.get("DDPSCOPE_BIN", os.path.join(ROOT, "build", "ddpscope")))
IS_ROOT = os.geteuid() == 0


def small_workload(path):
    """8 gradients of 512 KiB (4 MiB in all) with little compute: 4 ranks on a
    2-core machine oversubscribe, so the busy-waits are kept short."""
    params = [{"name": f"layer{i}.weight", "numel": 131072, "dtype": "float32",
               "backward_us": 300.0} for i in range(8)]
    with open(path, "w") as f:
        json.dump({"name": "small", "params": params, "forward_us": 1000,
                   "optimizer_us": 200}, f)


def tune(*args, timeout=600):
    return subprocess.run([DDPSCOPE, "tune", *args], capture_output=True, text=True,
                          timeout=timeout)


def netns_names():
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def ours(pid):
    return [n for n in netns_names() if n.startswith(f"ddpscope-{pid}-")]


def children(pid):
    """Worker ranks the coordinator `pid` started."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read()
        except (OSError, IndexError, ValueError):
            continue
        if ppid == pid and b"--worker" in cmdline:
            found.append(int(entry))
    return found


def namespace_holders(inodes):
    """Processes inside, and mounts of, the network namespaces with these inodes."""
    held = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.stat(f"/proc/{entry}/ns/net").st_ino in inodes:
                    held.append(f"process {entry}")
            except OSError:
                pass
    with open("/proc/self/mountinfo") as f:
        for line in f:
            for ino in inodes:
                if f"net:[{ino}]" in line:
                    held.append(line.strip())
    return held


class Running:
    """A sweep started in its own session (as a terminal would: Ctrl-C reaches
    the whole group), long enough to be interrupted: a 20 Mbit/s link."""

    def __init__(self, tmp, topology="2x2:inter=20mbit"):
        wl = os.path.join(tmp, "w.json")
        small_workload(wl)
        self.proc = subprocess.Popen(
            [DDPSCOPE, "tune", "--workload", wl, "--topology", topology, "--bucket-mb", "1,4",
             "--iters", "5", "--warmup", "1", "--results-dir", os.path.join(tmp, "results")],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
        self.pid = self.proc.pid

    def wait_until_measuring(self, test):
        """Returns the inodes of our namespaces once all four ranks run in them."""
        deadline = time.time() + 60
        while time.time() < deadline:
            if len(ours(self.pid)) == 3 and len(children(self.pid)) == 4:
                time.sleep(1.5)  # past the rendezvous, into the replay
                return {os.stat(f"/run/netns/{n}").st_ino for n in ours(self.pid)}
            test.assertIsNone(self.proc.poll(), "the sweep ended before it could be interrupted")
            time.sleep(0.05)
        test.fail("the ranks never started")

    def finish(self):
        out, err = self.proc.communicate(timeout=120)
        return self.proc.returncode, out, err


class CleanupChecks(unittest.TestCase):
    def assert_all_gone(self, pid, inodes=()):
        self.assertEqual(ours(pid), [], "namespaces left behind")
        links = subprocess.run(["ip", "link"], capture_output=True, text=True).stdout
        self.assertNotIn("dds-", links, "links in the host's namespace")
        # Unnamed but still held (a rank alive inside it), a namespace would keep
        # its veth, bridge and qdiscs: nothing may hold ours any more.
        deadline = time.time() + 20
        while namespace_holders(set(inodes)) and time.time() < deadline:
            time.sleep(0.1)
        self.assertEqual(namespace_holders(set(inodes)), [])
        self.assertEqual(children(pid), [])


@unittest.skipUnless(IS_ROOT, "emulating a topology needs root (network namespaces, tc)")
class Emulation(CleanupChecks):
    def test_inter_node_link_slows_the_sweep(self):
        before = netns_names()
        with tempfile.TemporaryDirectory() as tmp:
            wl = os.path.join(tmp, "w.json")
            small_workload(wl)
            medians, runs = {}, {}
            for topology in ("1x4", "2x2:inter=100mbit,inter_lat=50us"):
                js, db = os.path.join(tmp, "r.json"), os.path.join(tmp, "t.db")
                res = tune("--workload", wl, "--topology", topology, "--bucket-mb", "1,4",
                           "--iters", "3", "--warmup", "1", "--json", js, "-o", db)
                self.assertEqual(res.returncode, 0, res.stderr)
                with open(js) as f:
                    out = json.load(f)
                for r in out["results"]:
                    self.assertEqual(r["topology"], topology)  # both specs are canonical
                    self.assertEqual(r["nranks"], 4)
                con = sqlite3.connect(db)
                rows = con.execute("SELECT DISTINCT topology FROM tune_results").fetchall()
                con.close()
                os.remove(db)
                self.assertEqual(rows, [(topology,)])
                medians[topology] = {r["bucket_mb"]: r["iter_ms_median"] for r in out["results"]}
                runs[topology] = res.stdout
            self.assertIn("topology 1x4 emulated: one network namespace", runs["1x4"])
            slow = runs["2x2:inter=100mbit,inter_lat=50us"]
            self.assertIn("2 network namespaces", slow)
            self.assertIn("links shaped to 100mbit/s each way", slow)
            self.assertIn("inter_lat=50us: latency is not emulated", slow)
            self.assertNotIn("latency is not emulated", runs["1x4"])
            # Every bucket size: a ring all-reduce of 4 MiB sends 1.5 x 4 MiB over
            # each 100 Mbit/s inter-node link (~0.5 s), far above the loopback's time.
            for mb in (1, 4):
                fast, shaped = medians["1x4"][mb], medians["2x2:inter=100mbit,inter_lat=50us"][mb]
                self.assertGreater(shaped, 3 * fast, medians)
            self.assertEqual(netns_names(), before)


@unittest.skipUnless(IS_ROOT, "emulating a topology needs root (network namespaces, tc)")
class Cleanup(CleanupChecks):
    def test_after_a_failing_rank(self):
        with tempfile.TemporaryDirectory() as tmp:
            run = Running(tmp)
            inodes = run.wait_until_measuring(self)
            os.kill(children(run.pid)[-1], signal.SIGKILL)
            code, out, err = run.finish()
            self.assertEqual(code, 1, err)
            self.assertIn("ranks failed", err)
            self.assert_all_gone(run.pid, inodes)

    def test_after_ctrl_c(self):
        with tempfile.TemporaryDirectory() as tmp:
            run = Running(tmp)
            inodes = run.wait_until_measuring(self)
            os.killpg(run.pid, signal.SIGINT)  # what the terminal does on Ctrl-C
            code, out, err = run.finish()
            self.assertEqual(code, -signal.SIGINT, err)  # cleaned up, then died of the signal
            self.assert_all_gone(run.pid, inodes)

    def test_after_sigterm_to_the_coordinator(self):
        with tempfile.TemporaryDirectory() as tmp:
            run = Running(tmp)
            inodes = run.wait_until_measuring(self)
            os.kill(run.pid, signal.SIGTERM)  # the ranks only hear of it from the coordinator
            code, out, err = run.finish()
            self.assertEqual(code, -signal.SIGTERM, err)
            self.assert_all_gone(run.pid, inodes)

    def test_stale_leftovers_are_removed(self):
        dead = subprocess.Popen(["true"])
        dead.wait()
        stale = f"ddpscope-{dead.pid}-node0"
        subprocess.run(["ip", "netns", "add", stale], check=True)
        try:
            with tempfile.TemporaryDirectory() as tmp:
                wl = os.path.join(tmp, "w.json")
                small_workload(wl)
                res = tune("--workload", wl, "--topology", "1x2", "--bucket-mb", "4",
                           "--iters", "1", "--warmup", "0")
                self.assertEqual(res.returncode, 0, res.stderr)
                self.assertIn(f"removed network namespace {stale}, left behind by a dead run",
                              res.stdout)
                self.assertNotIn(stale, netns_names())
        finally:
            if stale in netns_names():
                subprocess.run(["ip", "netns", "del", stale])


class BadInput(unittest.TestCase):
    def expect_error(self, args, fragment, run=tune):
        res = run(*args)
        self.assertEqual(res.returncode, 2, res.stderr)
        self.assertEqual(len(res.stderr.strip().splitlines()), 1, res.stderr)
        self.assertIn(fragment, res.stderr)
        return res.stderr

    def test_malformed_topologies(self):
        before = netns_names()
        for spec, fragment in [
                ("2x", "topology '2x': ranks per node is missing"),
                ("0x4", "topology '0x4': nodes must be at least 1"),
                ("2x2:inter=1gbyte", "topology '2x2:inter=1gbyte': inter '1gbyte': unknown unit"),
                ("2x2:inter=fast", "inter 'fast' does not start with a number"),
                ("2x2:latency=5us", "unknown field 'latency'"),
                ("2x2:inter=1gbit,inter=2gbit", "inter is given twice")]:
            self.expect_error(["--topology", spec, "--workload", "preset:resnet50"], fragment)
        with tempfile.TemporaryDirectory() as tmp:
            bad = os.path.join(tmp, "topo.json")
            with open(bad, "w") as f:
                f.write('{"nodes": 2, "ranks_per_node": 2, "inter": 1}')
            self.expect_error(["--topology", bad], bad + ": inter must be a string with a unit")
            with open(bad, "w") as f:
                f.write('{"nodes": 2,')
            self.expect_error(["--topology", bad], bad + ": invalid JSON")
            self.expect_error(["--topology", os.path.join(tmp, "none.json")],
                              "none.json: cannot open the file")
        self.assertEqual(netns_names(), before)

    def test_bad_combinations(self):
        self.expect_error(["--topology", "2x2", "--nproc", "3"],
                          "--nproc 3 does not match --topology 2x2 (4 ranks")
        self.expect_error(["--topology", "2x2", "--backend", "gloo,mpi"],
                          "emulated topologies run the gloo backend only, not 'mpi'")

    def test_not_root(self):
        nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"]
        probe = subprocess.run(nobody + ["true"], capture_output=True)
        if probe.returncode != 0:
            self.skipTest("cannot drop to uid 65534 here: " + probe.stderr.decode().strip())
        before = netns_names()

        def as_nobody(*args):
            return subprocess.run(nobody + [DDPSCOPE, "tune", *args], capture_output=True,
                                  text=True, timeout=60, cwd="/tmp")
        self.expect_error(["--topology", "2x2:inter=1gbit", "--workload", "preset:resnet50",
                           "--bucket-mb", "25"],
                          "emulating topology 2x2:inter=1gbit needs root", run=as_nobody)
        self.assertEqual(netns_names(), before)


if __name__ == "__main__":
    sys.path.insert(0, os.path.join(ROOT, "tests", "support"))
    import ctest_unittest  # noqa: E402  (exit 77 when skipped: ctest's "Skipped")

    ctest_unittest.main(argv=[sys.argv[0]] + sys.argv[1:])
