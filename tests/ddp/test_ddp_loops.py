#!/usr/bin/env python3
"""The report against DDP's own truth, on the training loops people write.

Each test runs one loop of examples/ddp_loops.py on 2 CPU ranks (Gloo) twice,
plainly and under `ddpscope record --nproc 3`, then reads `ddpscope report
--json` and holds it to the truth files the job wrote itself (DDP's
`_get_ddp_logging_data()` and the loop's own counts, per rank):

- per DDP instance, the report's buckets come from DDP's account and are DDP's
  buckets (`rebuilt_bucket_sizes`, or `bucket_sizes` where DDP never rebuilt),
  as a multiset; its flags, cap and comm hook are DDP's;
- the bytes the report calls DDP buckets are exactly the gradient bytes DDP
  reduced (every synchronising backward reduces each bucket once, a joined
  rank's shadow step too); the loop's own collectives are "user"; none is
  "unknown";
- every rank's iterations are its optimizer steps, and its join() shadow
  iterations are those DDP's join hook ran;
- the trained parameters are bit-identical with and without ddpscope.

Run by each torch Python (tests/torch_pythons.cmake); the ranks run under the
same Python (sys.executable). On a GPU machine scripts/gpu_check.sh runs it with
DDPSCOPE_LOOPS_DEVICE=cuda (NCCL), DDPSCOPE_LOOPS_NPROC=2 and
DDPSCOPE_LOOPS_RANK_PREFIX=scripts/onegpu_rank.sh: a command put before each
rank's Python, plain and recorded (there, its own NCCL_HOSTID per rank, so
that NCCL runs two ranks on the one GPU). The compile loop needs torch 2.x: on torch 1.x
the job says so in its truth files and the test is skipped (exit 77).
"""
import json
import os
import socket
import sqlite3
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "support"))
import ctest_unittest  # noqa: E402

DDPSCOPE = os.environ.get("DDPSCOPE_BIN", os.path.join(ROOT, "build", "ddpscope"))
EXAMPLE = os.path.join(ROOT, "examples", "ddp_loops.py")
PY = sys.executable
DEVICE = os.environ.get("DDPSCOPE_LOOPS_DEVICE", "cpu")
# Two ranks: under torch 2.x each rank's DDP() imports torch._dynamo (4 s of
# CPU here), so a third rank costs every loop a third more; world size 3 is
# RecordDDP.test_three_ranks's (tests/integration/test_ddp_record.py).
NPROC = int(os.environ.get("DDPSCOPE_LOOPS_NPROC", "2"))
RANK_PREFIX = os.environ.get("DDPSCOPE_LOOPS_RANK_PREFIX", "").split()
STEPS = 6
JOIN_STEPS = [4 + 2 * r for r in range(NPROC)]  # examples/ddp_loops.py join_steps()
JOIN_SHADOWS = [max(JOIN_STEPS) - s for s in JOIN_STEPS]  # 2, 0 on 2 ranks
# One intra-op thread per rank (tests/integration/test_ddp_record.py: the PyPI
# wheel's OpenMP threads spin on a small machine).
JOB_ENV = dict(os.environ, OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"))
TIMEOUT_S = 300


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_plain(args):
    """The job without ddpscope, launched the way torchrun would."""
    port = str(free_port())
    procs = []
    for r in range(NPROC):
        env = dict(JOB_ENV, RANK=str(r), LOCAL_RANK=str(r), WORLD_SIZE=str(NPROC),
                   LOCAL_WORLD_SIZE=str(NPROC), MASTER_ADDR="127.0.0.1", MASTER_PORT=port)
        procs.append(subprocess.Popen(RANK_PREFIX + [PY, EXAMPLE] + args, env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, text=True))
    outs = []
    try:
        for p in procs:
            outs.append(p.communicate(timeout=TIMEOUT_S)[0])
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    return [p.returncode for p in procs], outs


def load(path):
    with open(path) as f:
        return json.load(f)


def truths(truth_dir):
    return [load(os.path.join(truth_dir, f"truth-{r}.json")) for r in range(NPROC)]


def digests(params_dir):
    return [load(os.path.join(params_dir, f"params-rank{r}.json")) for r in range(NPROC)]


def ddp_buckets(instance):
    """DDP's own bucket layout at the end: rebuilt if it rebuilt."""
    return instance["rebuilt_bucket_sizes"] or instance["bucket_sizes"]


def halves_buckets(instance):
    """fp16_compress_hook all-reduces each bucket as float16: half its bytes."""
    return instance["comm_hook"] == "fp16_compress_hook"


class Loops(unittest.TestCase):
    maxDiff = None

    def check_loop(self, loop):
        with tempfile.TemporaryDirectory(prefix=f"ddp-loops-{loop}-") as tmp:
            job = ["--loop", loop, "--steps", str(STEPS), "--device", DEVICE]
            plain = os.path.join(tmp, "plain")
            codes, outs = run_plain(job + ["--truth-dir", os.path.join(plain, "truth"),
                                           "--params-out", os.path.join(plain, "params")])
            self.assertEqual(codes, [0] * NPROC, "plain run failed:\n" + "\n".join(outs))
            plain_truth = truths(os.path.join(plain, "truth"))
            if "skipped" in plain_truth[0]:
                self.skipTest(plain_truth[0]["skipped"])

            rec = os.path.join(tmp, "rec")
            res = subprocess.run(
                [DDPSCOPE, "record", "--nproc", str(NPROC), "-o", rec, "--"] + RANK_PREFIX
                + [PY, EXAMPLE] + job
                + ["--truth-dir", os.path.join(rec, "truth"),
                   "--params-out", os.path.join(rec, "params")],
                capture_output=True, text=True, env=JOB_ENV, timeout=TIMEOUT_S)
            self.assertEqual(res.returncode, 0, f"record failed:\n{res.stdout}\n{res.stderr}")
            db = os.path.join(rec, "run.db")
            truth = truths(os.path.join(rec, "truth"))
            out = os.path.join(tmp, "report.json")
            res = subprocess.run([DDPSCOPE, "report", "-q", db, "--json", out],
                                 capture_output=True, text=True, timeout=TIMEOUT_S)
            self.assertEqual(res.returncode, 0, res.stderr)
            report = load(out)
            # Each check on its own: one failing still runs (and reports) the others.
            checks = {
                "truth": lambda: self.check_truth(loop, truth),
                "unperturbed": lambda: self.assertEqual(
                    plain_truth, [dict(t, elapsed_s=p["elapsed_s"])
                                  for t, p in zip(truth, plain_truth)],
                    "the job's own account differs with and without ddpscope"),
                "params": lambda: self.check_params(digests(os.path.join(rec, "params")),
                                                    digests(os.path.join(plain, "params"))),
                "instances": lambda: self.check_instances(report, truth[0]),
                "buckets": lambda: self.check_buckets(report, truth[0]),
                "roles": lambda: self.check_roles(report, truth, db),
                "ranks": lambda: self.check_ranks(report, truth),
            }
            for name, run_check in checks.items():
                with self.subTest(check=name):
                    run_check()

    # --- the job's own account ------------------------------------------------

    def check_truth(self, loop, truth):
        """The loop did what it says: a sanity check of the ground truth itself."""
        for r, t in enumerate(truth):
            self.assertEqual((t["loop"], t["rank"], t["world_size"]), (loop, r, NPROC))
            want_steps = JOIN_STEPS[r] if loop == "join_uneven" else STEPS
            self.assertEqual(t["optimizer_steps"], want_steps, f"rank {r}")
            self.assertEqual(t["expected_shadow_steps"],
                             JOIN_SHADOWS[r] if loop == "join_uneven" else 0, f"rank {r}")
            # DDP keeps one bucket layout on every rank (rank 0's on rebuild).
            layout = [(i["bucket_sizes"], i["rebuilt_bucket_sizes"]) for i in t["instances"]]
            self.assertEqual(layout, [(i["bucket_sizes"], i["rebuilt_bucket_sizes"])
                                      for i in truth[0]["instances"]], f"rank {r}")
        instances = truth[0]["instances"]
        self.assertEqual(len(instances), 2 if loop == "two_models" else 1)
        first = instances[0]
        self.assertEqual(first["find_unused_parameters"], loop == "find_unused")
        self.assertEqual(first["static_graph"], loop == "static_graph")
        self.assertEqual(first["gradient_as_bucket_view"], loop == "grad_as_bucket_view")
        self.assertEqual(first["comm_hook"],
                         "fp16_compress_hook" if loop == "fp16_hook" else None)
        if loop == "frozen_params":
            self.assertEqual(first["num_parameter_tensors"], 8, "2 of 6 layers frozen")
        for i in instances:
            # DDP rebuilds its buckets after the first iteration, except with
            # find_unused_parameters (and no static graph).
            self.assertEqual(i["rebuilt_bucket_sizes"] == [], loop == "find_unused", i)
            self.assertEqual(sum(i["bucket_sizes"]), sum(ddp_buckets(i)), i)

    def check_params(self, recorded, plain):
        """DDP keeps the replicas equal, and recording changes no parameter bit."""
        for r in range(NPROC):
            self.assertEqual(recorded[r]["sha256"], recorded[0]["sha256"],
                             f"rank {r} diverged from rank 0: {recorded[r]['head']}")
            self.assertEqual((recorded[r]["sha256"], recorded[r]["head"]),
                             (plain[r]["sha256"], plain[r]["head"]),
                             f"rank {r}: recorded parameters differ from the plain run's")

    # --- the report against it ----------------------------------------------

    def check_instances(self, report, truth):
        ddp = report["ddp"]
        self.assertEqual([d["instance"] for d in ddp], list(range(len(truth["instances"]))))
        for d, t in zip(ddp, truth["instances"]):
            msg = f"instance {d['instance']}: report {d}, DDP {t}"
            self.assertEqual(d["buckets_from"], "ddp", msg)
            self.assertEqual(sorted(d["bucket_bytes"]), sorted(ddp_buckets(t)), msg)
            self.assertEqual(d["rebuilt"], bool(t["rebuilt_bucket_sizes"]), msg)
            self.assertEqual(d["bucket_cap_bytes"], t["bucket_cap_bytes"], msg)
            for flag in ("find_unused_parameters", "static_graph", "gradient_as_bucket_view"):
                self.assertEqual(d[flag], t[flag], f"{flag}: {msg}")
            self.assertEqual(d["comm_hook"] or None, t["comm_hook"], msg)
            self.assertEqual(d["parameters"], t["num_parameter_tensors"], msg)

    def check_buckets(self, report, truth):
        for i, t in enumerate(truth["instances"]):
            buckets = [b for b in report["buckets"] if b["instance"] == i]
            reduced = [b["bytes"] * (2 if halves_buckets(t) else 1) for b in buckets]
            self.assertEqual(sorted(reduced), sorted(ddp_buckets(t)),
                             f"instance {i}: report's buckets {buckets}")
            # Every synchronising step reduces each bucket once.
            self.assertEqual(len({b["calls"] for b in buckets}), 1,
                             f"instance {i}: unequal calls {buckets}")
            self.assertGreater(buckets[0]["calls"], 0)

    def check_roles(self, report, truth, db):
        roles = {r["role"]: r for r in report["roles"]}
        self.assertLessEqual(set(roles), {"ddp_bucket", "ddp_control", "user", "unknown"})

        def get(role, key):
            return roles.get(role, {}).get(key, 0)

        # Each synchronising backward reduces every gradient byte once, whatever
        # the layout (before or after the rebuild); a joined rank shadows each
        # step the others still take with the same all-reduces, of zeros.
        want = 0
        for t in truth:
            for i, inst in enumerate(t["instances"]):
                steps = inst["sync_backwards"] + (t["expected_shadow_steps"] if i == 0 else 0)
                step_bytes = sum(inst["bucket_sizes"])
                want += steps * (step_bytes // 2 if halves_buckets(inst) else step_bytes)
        self.assertEqual(get("ddp_bucket", "bytes"), want, f"roles {report['roles']}")
        # The loop's own collectives (loss_logging's loss, the final barrier).
        self.assertEqual((get("user", "calls"), get("user", "bytes")),
                         (sum(t["user_collectives"]["calls"] for t in truth),
                          sum(t["user_collectives"]["bytes"] for t in truth)),
                         f"roles {report['roles']}")
        self.assertEqual(get("unknown", "calls"), 0, f"roles {report['roles']}")
        # Every recorded collective has a role.
        con = sqlite3.connect(db)
        total = con.execute("SELECT count(*) FROM collectives").fetchone()[0]
        con.close()
        self.assertEqual(sum(r["calls"] for r in report["roles"]), total,
                         f"roles {report['roles']}")
        self.assertGreater(get("ddp_control", "calls"), 0, "DDP's constructor broadcasts")

    def check_ranks(self, report, truth):
        ranks = sorted(report["ranks"], key=lambda r: r["rank"])
        self.assertEqual([(r["rank"], r["iterations"], r["shadow_iterations"]) for r in ranks],
                         [(t["rank"], t["optimizer_steps"], t["expected_shadow_steps"])
                          for t in truth])

    # --- one test per loop ------------------------------------------------------

    def test_loss_logging(self):
        self.check_loop("loss_logging")

    def test_find_unused(self):
        self.check_loop("find_unused")

    def test_join_uneven(self):
        self.check_loop("join_uneven")

    def test_no_sync_accum(self):
        self.check_loop("no_sync_accum")

    def test_static_graph(self):
        self.check_loop("static_graph")

    def test_grad_as_bucket_view(self):
        self.check_loop("grad_as_bucket_view")

    def test_fp16_hook(self):
        self.check_loop("fp16_hook")

    def test_two_models(self):
        self.check_loop("two_models")

    def test_frozen_params(self):
        self.check_loop("frozen_params")

    def test_compile(self):
        self.check_loop("compile")


if __name__ == "__main__":
    ctest_unittest.main()
