#!/usr/bin/env python3
"""scripts/model_carry.sh packs ddpscope, the Debian libraries it links and
iproute2 for a machine that has none of them (scripts/model_check.sh runs the
model's validation there). Checked here: every library the carried binaries
need resolves inside the carry, the carried ddpscope runs a real 2-rank Gloo
sweep through its wrapper, and model_check.sh refuses a folder that is not a
carry with one line and exit 2."""
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DDPSCOPE = os.environ.get("DDPSCOPE_BIN", os.path.join(ROOT, "build", "ddpscope"))
CARRY_SCRIPT = os.path.join(ROOT, "scripts", "model_carry.sh")


def machine_own():
    """The sonames the script leaves to the machine the carry goes to: its
    own `own=` pattern (an extended regex, which Python reads the same)."""
    with open(CARRY_SCRIPT) as f:
        return re.compile(re.search(r"^own='(.*)'$", f.read(), re.M).group(1))


def pack(carry):
    env = dict(os.environ, DDPSCOPE_BUILD=os.path.dirname(DDPSCOPE), MODEL_CARRY=carry)
    return subprocess.run([CARRY_SCRIPT], env=env,
                          capture_output=True, text=True, timeout=300)


def resolved_outside(binary, libs):
    """The libraries ldd finds for `binary` (loader pointed at `libs`) that are
    neither in `libs` nor the machine's own."""
    env = dict(os.environ, LD_LIBRARY_PATH=libs)
    out = subprocess.run(["ldd", binary], env=env, capture_output=True, text=True).stdout
    own, outside = machine_own(), []
    for line in out.splitlines():
        name, _, where = line.strip().partition(" => ")
        if own.match(name) or not where:
            continue
        if not where.startswith(libs + "/"):
            outside.append(line.strip())
    return outside


class ModelCarry(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.carry = os.path.join(cls.tmp.name, "carry")
        cls.packed = pack(cls.carry)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_carried_binaries_find_their_libraries_in_the_carry(self):
        self.assertEqual(self.packed.returncode, 0, self.packed.stderr)
        libs = os.path.join(self.carry, "lib")
        self.assertTrue(os.path.exists(os.path.join(libs, "libgloo.so.0")))
        for binary in ("ddpscope.bin", "net/ip.bin", "net/tc.bin"):
            self.assertEqual(resolved_outside(os.path.join(self.carry, binary), libs), [], binary)

    def test_carried_ddpscope_runs_a_gloo_sweep(self):
        self.assertEqual(self.packed.returncode, 0, self.packed.stderr)
        js = os.path.join(self.tmp.name, "sweep.json")
        res = subprocess.run([os.path.join(self.carry, "ddpscope"), "tune", "--workload",
                              "preset:resnet50", "--backend", "gloo", "--nproc", "2",
                              "--bucket-mb", "25", "--iters", "2", "--warmup", "1", "--json", js],
                             capture_output=True, text=True, timeout=300)
        self.assertEqual(res.returncode, 0, res.stderr)
        with open(js) as f:
            results = json.load(f)["results"]
        self.assertEqual([(r["backend"], r["bucket_mb"]) for r in results], [("gloo", 25)])
        self.assertGreater(results[0]["iter_ms_median"], 0)

    def test_carried_iproute2_runs(self):
        self.assertEqual(self.packed.returncode, 0, self.packed.stderr)
        for tool in ("ip", "tc"):
            res = subprocess.run([os.path.join(self.carry, "net", tool), "-V"],
                                 capture_output=True, text=True, timeout=30)
            self.assertEqual(res.returncode, 0, res.stderr)
            self.assertIn("iproute2", res.stdout)

    def test_model_check_refuses_a_folder_that_is_not_a_carry(self):
        res = subprocess.run([os.path.join(ROOT, "scripts", "model_check.sh"), self.tmp.name,
                              os.path.join(self.tmp.name, "out")],
                             capture_output=True, text=True, timeout=30)
        self.assertEqual(res.returncode, 2)
        self.assertEqual(res.stdout, "")
        self.assertEqual(len(res.stderr.strip().splitlines()), 1, res.stderr)
        self.assertIn(self.tmp.name, res.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.tmp.name, "out")))


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1] + sys.argv[1:])
