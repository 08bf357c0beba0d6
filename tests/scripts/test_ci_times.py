#!/usr/bin/env python3
"""scripts/ci_times.sh, the account scripts/test.sh prints at its end, held to
a planted run: each build's time as the legs wrote it, the ten slowest tests in
order (the eleventh left out), the compiler cache's line, and one warning line
past 60 minutes that names the slowest build and test, never below, and never
a failed exit status for time."""
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "support"))
import ctest_unittest  # noqa: E402

SCRIPT = os.path.join(ROOT, "scripts", "ci_times.sh")
# Twelve tests, the slowest a sanitizer leg; seconds as ctest prints them.
TESTS = [("sanitizers: ASan+UBSan over the C++ suite", 921.5), ("ddp_loops[pypi]: join", 88.25),
         ("test_unit: store", 0.5), ("fuzz: every target, corpus replayed then fuzzed", 301.0),
         ("hangs[debian]: stalled rank", 64.0), ("docs: the guide's marked examples run", 55.0),
         ("check[pypi]: noise", 40.0), ("live[pypi]: metrics", 33.0), ("a", 20.0), ("b", 12.0),
         ("c", 11.0), ("d", 10.5)]


def ctest_log(tests):
    lines = ["Test project /x/build"]
    for i, (name, secs) in enumerate(tests):
        verdict = "***Failed " if i == 1 else "  Passed  "
        lines.append(f"{i + 1:3}/{len(tests)} Test {'#' + str(i + 7):>4}: {name} {'.' * 12}{verdict}"
                     f"{secs:8.2f} sec")
    lines.append(f"92% tests passed, 1 tests failed out of {len(tests)}")
    return "\n".join(lines) + "\n"


class CiTimes(unittest.TestCase):
    def run_times(self, total_s, legs=True):
        work = tempfile.mkdtemp(prefix="ddpscope-ci-times-")
        build = os.path.join(work, "build")
        for leg, secs in (("asan-build", 601), ("tsan-build", 402), ("fuzz-build", 203)):
            os.makedirs(os.path.join(build, leg))
            if legs:
                with open(os.path.join(build, leg, "ddpscope-times"), "w") as f:
                    f.write(f"build {secs}\ntests 99\n")
        phases, log = os.path.join(work, "phases"), os.path.join(work, "ctest.log")
        with open(phases, "w") as f:
            f.write(f"setup 31\nmain 512\ntotal {total_s}\n")
        with open(log, "w") as f:
            f.write(ctest_log(TESTS))
        return subprocess.run([SCRIPT, build, phases, log], capture_output=True, text=True)

    def test_builds_and_the_ten_slowest_tests(self):
        r = self.run_times(1800)
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.splitlines()
        for want in ("main build", "ASan+UBSan build", "TSan build", "fuzz build"):
            self.assertTrue(any(l.startswith(want) for l in lines), want)
        self.assertRegex(r.stdout, r"main build +512 s\n")
        self.assertRegex(r.stdout, r"ASan\+UBSan build +601 s\n")
        self.assertRegex(r.stdout, r"TSan build +402 s\n")
        self.assertRegex(r.stdout, r"fuzz build +203 s\n")
        at = lines.index("ten slowest tests:")
        slowest = lines[at + 1:at + 11]
        want = sorted(TESTS, key=lambda t: -t[1])[:10]
        self.assertEqual([l.split(" s  ", 1)[1] for l in slowest], [n for n, _ in want])
        self.assertEqual(float(slowest[0].split()[0]), 921.5)
        self.assertNotIn(" s  d\n", r.stdout.split("ten slowest tests:")[1].split("compiler cache")[0])
        self.assertRegex(lines[at + 11], r"^compiler cache: ")
        self.assertNotIn("WARNING", r.stdout)

    def test_a_leg_that_wrote_nothing_is_unknown(self):
        r = self.run_times(1800, legs=False)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stdout, r"TSan build +\? s\n")

    def test_one_warning_past_sixty_minutes_and_the_run_still_passes(self):
        self.assertNotIn("WARNING", self.run_times(3600).stdout)
        r = self.run_times(3601)
        self.assertEqual(r.returncode, 0, r.stderr)
        warnings = [l for l in r.stdout.splitlines() if "WARNING" in l]
        self.assertEqual(len(warnings), 1, r.stdout)
        self.assertIn("60 min", warnings[0])
        self.assertIn("ASan+UBSan build 601 s", warnings[0])
        self.assertIn("sanitizers: ASan+UBSan over the C++ suite 922 s", warnings[0])
        self.assertLess(warnings[0].index("ASan+UBSan build"), warnings[0].index("main build"))

    def test_bad_usage(self):
        r = subprocess.run([SCRIPT, "only-one"], capture_output=True, text=True)
        self.assertEqual((r.returncode, len(r.stderr.strip().splitlines())), (2, 1))


if __name__ == "__main__":
    ctest_unittest.main()
