#!/usr/bin/env python3
"""`ddpscope tune --backend model` end to end: NCCL priors on a large cluster,
emulated-topology predictions, bad input, and the model against a real Gloo
sweep on this machine."""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DDPSCOPE = os.environ.get("DDPSCOPE_BIN", os.path.join(ROOT, "build", "ddpscope"))

# The model's median |error| against measurement on 2 Gloo ranks, in percent:
# a fixed bound, asserted once. Not the 5 %: on this 2-core machine the
# 2-rank small-message cost is bimodal and the suite shares the cores, and
# median errors of 10.7-30 % have been seen (docs/model.md; 12.8 % on
# 2026-11-24). The bound says the model is in the right range; the accuracy
# target is measured by bench/model_accuracy.sh on a quiet machine (issue 17).
BOUND_PCT = 35.0

def tune(*args, timeout=600):
    return subprocess.run([DDPSCOPE, "tune", *args], capture_output=True, text=True,
                          timeout=timeout)


def layered_workload(path, layers=96, numel=131072, backward_us=600.0):
    """Equal layers with real compute each: where bucket size matters."""
    params = [{"name": f"layer{i}.weight", "numel": numel, "dtype": "float32",
               "backward_us": backward_us} for i in range(layers)]
    with open(path, "w") as f:
        json.dump({"name": "layers", "params": params, "forward_us": 8000,
                   "optimizer_us": 1500}, f)


class Predict(unittest.TestCase):
    def test_nccl_cluster_outputs(self):
        with tempfile.TemporaryDirectory() as tmp:
            js, conf = os.path.join(tmp, "r.json"), os.path.join(tmp, "nccl_tuner.conf")
            res = tune("--workload", "preset:gpt2-medium", "--backend", "model", "--topology",
                       "8x8:inter=400gbit", "--bucket-mb", "5,25,100", "--json", js,
                       "--nccl-tuner-config", conf)
            self.assertEqual(res.returncode, 0, res.stderr)
            with open(js) as f:
                out = json.load(f)
            self.assertEqual(len(out["results"]), 3)
            for r in out["results"]:
                self.assertEqual(r["backend"], "model")
                self.assertEqual(r["modelled_backend"], "nccl")
                self.assertEqual(r["nranks"], 64)
                for key in ("topology", "bucket_mb", "iter_ms_median", "comm_ms_median",
                            "exposed_ms_median"):
                    self.assertIn(key, r)
            env = out["recommendation"]["environment"]
            self.assertIn("NCCL_TUNER_CONFIG_FILE=" + conf, env)
            self.assertIn("recommended:", res.stdout)
            with open(conf) as f:
                rows = [l.strip().split(",") for l in f if l.strip() and not l.startswith("#")]
            self.assertGreaterEqual(len(rows), 2)
            self.assertEqual(rows[0][1], "0")
            self.assertEqual(rows[-1][2], "4294967295")
            for row in rows:
                self.assertEqual(len(row), 10)
                self.assertEqual(row[0], "allreduce")
                self.assertEqual(row[6:8], ["8", "64"])

    def test_topologies_differ(self):
        """1x4 vs 2x2 with a 1 Gbit/s link between nodes, from one calibration."""
        with tempfile.TemporaryDirectory() as tmp:
            cal = os.path.join(tmp, "cal.json")
            with open(cal, "w") as f:
                json.dump({"kind": "ddpscope-calibration", "backend": "gloo",
                           "algorithm": "ring", "comm_rate_during_compute": 0.5,
                           "intra": {"alpha_us": 60, "beta_ns_per_byte": 2.0,
                                     "gamma_ns_per_byte": 0}}, f)
            wl = os.path.join(tmp, "w.json")
            layered_workload(wl)
            iters = {}
            for topo in ("1x4", "2x2:inter=1gbit"):
                js = os.path.join(tmp, topo.replace(":", "_") + ".json")
                res = tune("--workload", wl, "--backend", "model", "--topology", topo,
                           "--calibration", cal, "--bucket-mb", "0.5,2,8,32", "--json", js)
                self.assertEqual(res.returncode, 0, res.stderr)
                with open(js) as f:
                    out = json.load(f)
                iters[topo] = {r["bucket_mb"]: r["iter_ms_median"] for r in out["results"]}
                self.assertEqual(out["results"][0]["topology"], topo)
            for mb in iters["1x4"]:
                self.assertGreater(iters["2x2:inter=1gbit"][mb], 1.3 * iters["1x4"][mb], iters)


class BadInput(unittest.TestCase):
    def assertOneLine(self, res, *needles):
        self.assertEqual(res.returncode, 2, res.stdout + res.stderr)
        lines = res.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, res.stderr)
        for n in needles:
            self.assertIn(n, lines[0])

    def test_malformed_topology(self):
        for spec in ("2by2", "0x4", "2x2:inter=fast", "2x2:wan=1gbit"):
            res = tune("--backend", "model", "--topology", spec, "--bucket-mb", "25")
            self.assertOneLine(res, spec)

    def test_bad_calibration(self):
        with tempfile.TemporaryDirectory() as tmp:
            cal = os.path.join(tmp, "cal.json")
            res = tune("--backend", "model", "--calibration", cal, "--bucket-mb", "25")
            self.assertOneLine(res, cal, "cannot open")
            with open(cal, "w") as f:
                f.write('{"kind": "ddpscope-calibration", "backend": "gloo", "intra": {}}')
            res = tune("--backend", "model", "--calibration", cal, "--bucket-mb", "25")
            self.assertOneLine(res, cal, "alpha_us")

    def test_flags_that_do_not_go_together_are_refused_before_calibrating(self):
        """One line, exit 2, no calibration measured (nothing written)."""
        with tempfile.TemporaryDirectory() as tmp:
            cal = os.path.join(tmp, "cal.json")
            res = tune("--backend", "gloo,model", "--calibrate", "--calibration", cal,
                       "--nccl-tuner-config", os.path.join(tmp, "t.conf"), "--bucket-mb", "25")
            self.assertOneLine(res, "--nccl-tuner-config")
            self.assertNotIn("calibrating", res.stderr)
            self.assertFalse(os.path.exists(cal))
            res = tune("--backend", "model", "--model-algorithm", "tree", "--bucket-mb", "25")
            self.assertOneLine(res, "--model-algorithm")
            res = tune("--backend", "model", "--calibrate", "--model-algorithm", "ring-ish",
                       "--calibration", cal, "--bucket-mb", "25")
            self.assertOneLine(res, "ring-ish")
            self.assertFalse(os.path.exists(cal))


class Validate(unittest.TestCase):
    def sweep_and_predict(self, tmp):
        """Calibrate on 2 Gloo ranks, sweep them, predict the same sweep."""
        wl, js, cal = (os.path.join(tmp, n) for n in ("w.json", "r.json", "cal.json"))
        layered_workload(wl)
        res = tune("--workload", wl, "--backend", "gloo,model", "--calibrate", "--calibration",
                   cal, "--nproc", "2", "--bucket-mb", "0.5,1,2,4,8,16,64", "--iters", "8",
                   "--warmup", "2", "--json", js, timeout=900)
        self.assertEqual(res.returncode, 0, res.stderr)
        print(res.stdout, file=sys.stderr)
        self.assertIn("model vs measurement", res.stdout)
        self.assertTrue(os.path.exists(cal))
        with open(js) as f:
            return json.load(f)

    def test_model_matches_gloo_sweep(self):
        """The median |error| of the predicted iteration time stays within the bound,
        the measured sweep ran each cap's bucket layout (more buckets the
        smaller the cap), and the model finds the smallest (latency-bound)
        buckets clearly slowest. Not asserted of the measurement: on this
        2-core VM its per-message cost is bimodal, and a quiet serial run
        measured 0.5 MiB buckets at 1.17 x the best setting (104.5 against
        89.3 ms), the sweep's other settings moving by +-10 % among themselves."""
        with tempfile.TemporaryDirectory() as tmp:
            out = self.sweep_and_predict(tmp)
        v = out["validation"]
        self.assertEqual(len(v["rows"]), 7)
        errors = [abs(r["error_pct"]) for r in v["rows"]]
        self.assertAlmostEqual(v["median_abs_error_pct"], statistics.median(errors), places=6)
        print(f"median |error| {v['median_abs_error_pct']:.1f}% (bound {BOUND_PCT:.1f}%); "
              f"calibration R^2 {out['model']['calibration']['r2']:.3f}", file=sys.stderr)
        self.assertLessEqual(v["median_abs_error_pct"], BOUND_PCT)
        measured = sorted((r for r in out["results"] if r["backend"] == "gloo"),
                          key=lambda r: r["bucket_mb"])
        buckets = [r["buckets"] for r in measured]
        self.assertEqual(buckets, sorted(buckets, reverse=True), buckets)
        self.assertGreater(buckets[0], buckets[-1], buckets)
        rows = [r for r in out["results"] if r["backend"] == "model"]
        best = min(r["iter_ms_median"] for r in rows)
        smallest = min(rows, key=lambda r: r["bucket_mb"])
        self.assertGreater(smallest["iter_ms_median"], 1.2 * best,
                           "model: the smallest buckets are not clearly slowest")


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]] + sys.argv[1:])
