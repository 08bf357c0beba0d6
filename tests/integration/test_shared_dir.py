"""Recording on a directory several hosts share (profiler/store/completion.h,
profiler/core/shared_fs.h): two emulated hosts (UTS namespaces, so each has
its own host name) of two ranks each, started by one launcher line, every
host's `ddpscope record -o` on the same directory. Exactly one record merges,
once all four ranks' files are finished; every collective is in run.db. On a
network file system (forced here with DDPSCOPE_NETWORK_FS=1) no WAL file ever
appears on the shared path; without it one does (so the watch could see it).
Needs root for unshare: skipped (exit 77) without it."""
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "support"))
import ctest_unittest  # noqa: E402

BIN = os.environ["DDPSCOPE_BIN"]
JOB = os.environ["WORKLOAD_EXE"]
CALLS, PACE_MS = 15, 40


def can_unshare():
    return subprocess.run(["unshare", "--uts", "true"], capture_output=True).returncode == 0


def host_script(tmp, out, name, ranks, delay):
    """One host: its name, then its record of its two ranks (world size 4),
    which start `delay` seconds after the record (both records start before
    any rank finishes, as in a job whose ranks talk to each other)."""
    job = " & ".join(f"RANK={r} LOCAL_RANK={i} WORLD_SIZE=4 {JOB} paced {CALLS} {PACE_MS}"
                     for i, r in enumerate(ranks))
    path = os.path.join(tmp, f"{name}.sh")
    with open(path, "w") as f:
        f.write(f"hostname {name}\n"
                f"exec {BIN} record -o {out} -- sh -c 'sleep {delay}; {job} & wait' "
                f"2> {tmp}/{name}.err\n")
    return path


class Watch(threading.Thread):
    """Notes every WAL file that appears in the shared directory."""

    def __init__(self, path):
        super().__init__(daemon=True)
        self.path, self.seen, self.done = path, set(), threading.Event()

    def run(self):
        while not self.done.wait(0.005):
            if os.path.isdir(self.path):
                self.seen.update(n for n in os.listdir(self.path) if n.endswith("-wal"))


@unittest.skipUnless(os.geteuid() == 0 and can_unshare(), "needs root for unshare --uts")
class SharedDirectory(unittest.TestCase):
    def record_two_hosts(self, network_fs):
        tmp = tempfile.mkdtemp(prefix="ddpscope-shared-")
        self.addCleanup(shutil.rmtree, tmp, True)
        out = os.path.join(tmp, "shared")
        a = host_script(tmp, out, "host-a", [0, 1], 0)
        b = host_script(tmp, out, "host-b", [2, 3], 1)  # starts later: host-a finishes first
        env = dict(os.environ, DDPSCOPE_QUIET="1", DDPSCOPE_NETWORK_FS="1" if network_fs else "0")
        watch = Watch(out)
        watch.start()
        r = subprocess.run(["sh", "-c", f"unshare --uts sh {a} & unshare --uts sh {b} & wait"],
                           env=env, capture_output=True, text=True, timeout=120)
        watch.done.set()
        watch.join()
        self.assertEqual(r.returncode, 0, r.stderr)
        errs = {h: open(os.path.join(tmp, f"{h}.err")).read() for h in ("host-a", "host-b")}
        return out, errs, watch.seen

    def check_one_merge(self, out, errs):
        merged = [h for h, e in errs.items() if "recorded 4 ranks" in e]
        self.assertEqual(merged, ["host-b"], errs)
        self.assertIn("2 of 4 ranks recorded", errs["host-a"])
        db = sqlite3.connect(os.path.join(out, "run.db"))
        hosts = db.execute("SELECT rank, host FROM processes ORDER BY rank").fetchall()
        self.assertEqual(hosts, [(0, "host-a"), (1, "host-a"), (2, "host-b"), (3, "host-b")])
        per_rank = db.execute("SELECT rank, count(*) FROM collectives GROUP BY rank").fetchall()
        self.assertEqual(per_rank, [(r, 2 * CALLS) for r in range(4)])

    def test_network_fs_one_merge_no_wal(self):
        out, errs, wal = self.record_two_hosts(network_fs=True)
        self.check_one_merge(out, errs)
        self.assertEqual(wal, set())

    def test_local_fs_one_merge_with_wal(self):
        out, errs, wal = self.record_two_hosts(network_fs=False)
        self.check_one_merge(out, errs)
        self.assertTrue(wal, "the watch saw no WAL file: it could not have caught one")


if __name__ == "__main__":
    ctest_unittest.main()
