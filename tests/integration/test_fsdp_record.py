#!/usr/bin/env python3
"""`ddpscope record` and `report` on real PyTorch FSDP2 (fully_shard) jobs
(CPU, Gloo), examples/fsdp_train.py.

Each case runs one job and asserts everything that job shows, so the suite
pays for few jobs:
  Sharded  2 ranks, 4 blocks and the root: every collective FSDP's, each
           unit's sizes equal FSDP's own account on every rank, reduce-scatters
           named as such though Gloo runs all-reduces, no DDP anywhere, steps,
           exposure, prefetch, every format, `check` unit by unit, `tune`
           saying it replays DDP only;
           parameters bit-identical to the job run without ddpscope.
  Mixed    4 ranks, HSDP (2 x 2), bfloat16 all-gathers and float32 reductions,
           explicit prefetch: dtypes and sizes, HSDP's all-reduce phase,
           forward prefetch seen.
  Both     FSDP over the model and DDP over a head in one step: both sections,
           each collective in one of them.
  Roots    two sharded models trained in one step, one a parameterless
           nn.Sequential: each root named by its own module, with its own
           table in the terminal and on the page; `check` keeps their units
           apart.
  Hang     2 ranks, rank 1 stuck for good after blocks.1's forward in step 3:
           `record --hang-after` and the report name the all-gather rank 0
           waits in by unit, phase and step, rank 1's last completed one, and
           each rank's line in the example.
  Composed activation checkpointing and torch.compile (inductor) per block,
           as torchtitan composes them: backward's recomputed forwards add no
           all-gather and no forward phase, compiled blocks lose no unit;
           parameters bit-identical to the job run without ddpscope.
  Launch   3 ranks, gradient accumulation: `record --nproc` trains as
           torchrun does, bit for bit; the metrics file's FSDP series equal
           the report of the same window.
Debian's torch 1.13 has no FSDP2: there the example says so and every case is
skipped (exit 77), never passed.
"""
import collections
import csv
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__))))
from test_ddp_record import DDPSCOPE, JOB_ENV, PY, ROOT, free_port, run_plain  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "scripts"))
from gpu_check_fsdp import fsdp_accounts, phases_of  # noqa: E402
from test_live import parse, report_window  # noqa: E402

EXAMPLE = os.path.join(ROOT, "examples", "fsdp_train.py")
STEPS = 6
# blocks.2 holds 8 times the others' parameters, so its all-gather is the
# longest. Wide blocks (512) make the transfer outweigh the scheduling delays a
# loaded 2-core machine adds to every collective (at width 256, in a CI run,
# blocks.1 waited 5.41 ms and blocks.2 5.39). A small batch keeps blocks.2's
# 8 times longer compute short: a rank that falls behind in it makes the
# other wait in the next unit's all-gather (with the default batch of 32,
# blocks.3's outgrew blocks.2's in 2 of 13 quiet runs).
HUGE_JOB = ["--iters", str(STEPS), "--huge-block", "2", "--batch", "4", "--width", "512"]

try:
    from torch.distributed.fsdp import fully_shard  # noqa: F401
    HAS_FSDP2 = True
except (ImportError, ValueError):  # Debian's 1.13: its FSDP1 fails to import on Python 3.11
    HAS_FSDP2 = False


def record(out, nproc, args, flags=(), check=True):
    """`record` of the example; check: it must succeed (else the job ends by
    what `flags` make record do)."""
    res = subprocess.run([DDPSCOPE, "record", "-o", out, "--nproc", str(nproc), *flags, "--", PY,
                          EXAMPLE] + args, capture_output=True, text=True, timeout=600, env=JOB_ENV)
    if check and res.returncode != 0:
        raise AssertionError(f"record failed ({res.returncode}): {res.stderr}")
    return res


def report(run_db, *flags):
    res = subprocess.run([DDPSCOPE, "report", run_db, *flags], capture_output=True, text=True,
                         timeout=300)
    if res.returncode != 0:
        raise AssertionError(f"report failed ({res.returncode}): {res.stderr}")
    return res.stdout


def report_json(run_db):
    path = run_db + ".json"
    report(run_db, "--json", path)
    with open(path) as f:
        return json.load(f)


def trace_collectives(run_db, tmp):
    """The collectives' slices (device or host call, not the host call
    beside a device slice) of `report --trace` in Chrome JSON."""
    path = os.path.join(tmp, "trace.json")
    report(run_db, "-q", "--trace", path)
    with open(path) as f:
        events = json.load(f)["traceEvents"]
    return [e for e in events if e.get("ph") == "X" and e.get("cat") in ("gloo", "nccl")]


def same_params(test, ours, theirs, nproc):
    """Every rank trained to the same parameters, bit for bit, in both runs
    (--params-out digests)."""
    for r in range(nproc):
        with open(os.path.join(ours, f"params-rank{r}.json")) as a, \
                open(os.path.join(theirs, f"params-rank{r}.json")) as b:
            test.assertEqual(json.load(a)["sha256"], json.load(b)["sha256"], f"rank {r}")


class NoFsdp2(unittest.TestCase):
    @unittest.skipIf(HAS_FSDP2, "this torch has FSDP2")
    def test_the_example_says_this_torch_has_none(self):
        res = subprocess.run([PY, EXAMPLE], capture_output=True, text=True, timeout=120)
        self.assertEqual(res.returncode, 3)
        self.assertIn("has no FSDP2", res.stderr)


@unittest.skipUnless(HAS_FSDP2, "this torch has no FSDP2 (torch.distributed.fsdp.fully_shard)")
class Sharded(unittest.TestCase):
    def test_units_phases_and_steps(self):
        with tempfile.TemporaryDirectory() as tmp:
            out, logs, params = (os.path.join(tmp, d) for d in ("run", "log", "params"))
            record(out, 2, [*HUGE_JOB, "--fsdp-log", logs, "--params-out", params])
            rep = report_json(os.path.join(out, "run.db"))
            self.check_account(rep, fsdp_accounts(logs, 2))
            self.check_roles_and_steps(rep)
            self.check_exposure(phases_of(rep))
            self.check_formats(os.path.join(out, "run.db"), tmp, rep)
            self.check_gate(os.path.join(out, "run.db"), tmp)
            self.check_no_tune(os.path.join(out, "run.db"))
            plain = os.path.join(tmp, "plain")
            _, codes = run_plain(2, [*HUGE_JOB, "--params-out",
                                     plain], EXAMPLE)
            self.assertEqual(codes, [0, 0])
            same_params(self, params, plain, 2)

    def check_account(self, rep, logs):
        self.assertEqual(len(rep["fsdp"]), 1)
        root = rep["fsdp"][0]
        self.assertEqual(root["world_size"], 2)
        self.assertTrue(root["shared_comm"])
        by = phases_of(rep)
        for log in logs:  # every rank's own account: the sizes are the same
            self.assertEqual({u["fqn"] for u in log["units"]}, {u["fqn"] for u in root["units"]})
            for u in log["units"]:
                numel = u["padded_unsharded_numel"]
                self.assertEqual(by[(u["fqn"], "forward_all_gather")]["bytes"], numel * 4)
                self.assertEqual(by[(u["fqn"], "reduce_scatter")]["bytes"], numel * 4)
        for (fqn, phase), p in by.items():
            self.assertEqual(p["per_iteration"], 1.0, (fqn, phase))
            self.assertEqual(p["wire_bytes"], p["bytes"], (fqn, phase))
            if phase == "reduce_scatter":
                self.assertEqual((p["op"], p["carried_as"]), ("reduce_scatter", "allreduce"))
            else:
                self.assertEqual((p["op"], p["carried_as"]), ("allgather", None))
        # The root keeps its parameters after forward: no backward all-gather.
        self.assertNotIn(("", "backward_all_gather"), by)
        self.assertEqual(sum(1 for k in by if k[1] == "backward_all_gather"), 4)

    def check_roles_and_steps(self, rep):
        roles = {r["role"]: r["calls"] for r in rep["roles"]}
        self.assertEqual(set(roles), {"fsdp_all_gather", "fsdp_reduce_scatter"}, roles)
        self.assertEqual(rep["ddp"], [])
        self.assertEqual(rep["buckets"], [])
        self.assertEqual(rep["compute_source"], "blocked-thread")
        it = rep["iterations"]
        self.assertEqual((it["count"], it["warmup"]), (STEPS, 1))
        self.assertGreater(it["fsdp_comm_median_ms"], 0)
        self.assertLessEqual(it["fsdp_exposed_median_ms"], it["fsdp_comm_median_ms"] * 1.0001)

    def check_exposure(self, by):
        """Gloo's collectives block the thread that issues them: a forward
        all-gather the unit issued itself is exposed whole and late by its
        own length; the backward ones FSDP prefetched, all of them."""
        for (fqn, phase), p in by.items():
            if phase == "forward_all_gather":
                self.assertEqual(p["prefetched"], 0, fqn)
                self.assertAlmostEqual(p["exposed_us"], p["median_us"], delta=p["median_us"] * 0.005)
                self.assertLess(p["slack_us"], 0, fqn)
            if phase == "backward_all_gather":
                self.assertEqual(p["prefetched"], p["calls"], fqn)
            if phase == "reduce_scatter":
                self.assertIsNone(p["slack_us"])
                self.assertIsNotNone(p["tail_us"])
        # blocks.2, 8 times the others' parameters, is the unit waited for most.
        forward = {fqn: p for (fqn, phase), p in by.items() if phase == "forward_all_gather"}
        self.assertEqual(max(forward, key=lambda f: forward[f]["exposed_us"]), "blocks.2",
                         {f: p["exposed_us"] for f, p in forward.items()})

    def check_gate(self, run_db, tmp):
        """`check` compares FSDP runs unit by unit: the run against itself
        passes; against a copy whose blocks.2 forward all-gathers (and the
        calls that waited for them) last 200 ms longer, that unit regresses."""
        same = subprocess.run([DDPSCOPE, "check", "--baseline", run_db, "--candidate", run_db,
                               "--metric", "fsdp"], capture_output=True, text=True, timeout=300)
        self.assertEqual(same.returncode, 0, same.stdout + same.stderr)
        self.assertEqual(same.stdout.count("FSDP unit "), 5, same.stdout)
        slow = os.path.join(tmp, "slow.db")
        shutil.copy(run_db, slow)
        db = sqlite3.connect(slow)
        unit = ("SELECT rank, unit FROM fsdp_info WHERE key = 'fqn' AND value = 'blocks.2'")
        db.execute("UPDATE collectives SET end_ns = end_ns + 200000000 WHERE (rank, seq) IN "
                   "(SELECT rank, seq_begin FROM fsdp_regions WHERE kind = 'forward_all_gather' "
                   f"AND (rank, unit) IN ({unit}))")
        db.execute("UPDATE fsdp_regions SET end_ns = end_ns + 200000000 WHERE kind = "
                   f"'forward_all_gather' AND (rank, unit) IN ({unit})")
        db.commit()
        db.close()
        worse = subprocess.run([DDPSCOPE, "check", "--baseline", run_db, "--candidate", slow,
                                "--metric", "fsdp"], capture_output=True, text=True, timeout=300)
        self.assertEqual(worse.returncode, 1, worse.stdout + worse.stderr)
        regressed = [l for l in worse.stdout.splitlines() if l.startswith("REGRESSION ")]
        self.assertEqual(len(regressed), 1, worse.stdout)
        self.assertIn("FSDP unit blocks.2", regressed[0])

    def check_no_tune(self, run_db):
        """`tune` replays DDP's buckets: an FSDP2 job has none, and is told so."""
        res = subprocess.run([DDPSCOPE, "tune", "--workload", run_db], capture_output=True,
                             text=True, timeout=120)
        self.assertEqual(res.returncode, 2, res.stderr)
        self.assertEqual(res.stderr.strip(), f"ddpscope: {run_db}: an FSDP2 job without DDP; tune "
                         "replays DDP's gradient buckets only (`report` gives FSDP's units and "
                         "their advice)")

    def check_formats(self, run_db, tmp, rep):
        text = report(run_db)
        self.assertIn("FSDP root 0", text)
        self.assertNotIn("DDP 0", text)
        self.assertNotIn("buckets from the all-reduce pattern", text)
        csv_dir = os.path.join(tmp, "csv")
        report(run_db, "--csv", csv_dir)
        with open(os.path.join(csv_dir, "fsdp_units.csv")) as f:
            rows = list(csv.DictReader(f))
        self.assertEqual(len(rows), sum(len(u["phases"]) for u in rep["fsdp"][0]["units"]))
        html = os.path.join(tmp, "r.html")
        report(run_db, "--html", html)
        with open(html) as f:
            self.assertIn('<section id="fsdp">', f.read())
        # The trace names each by its unit and phase; FSDP prefetched every
        # backward all-gather (check_exposure).
        names = {e["name"] for e in trace_collectives(run_db, tmp)}
        units = [u["fqn"] or "(root)" for u in rep["fsdp"][0]["units"]]
        self.assertEqual(names, {f"allgather {u} forward" for u in units} |
                         {f"allgather {u} backward (prefetch)" for u in units if u != "(root)"} |
                         {f"reduce_scatter {u}" for u in units})


@unittest.skipUnless(HAS_FSDP2, "this torch has no FSDP2 (torch.distributed.fsdp.fully_shard)")
class Mixed(unittest.TestCase):
    def test_hsdp_mixed_precision_and_prefetch(self):
        with tempfile.TemporaryDirectory() as tmp:
            out, logs = os.path.join(tmp, "run"), os.path.join(tmp, "log")
            record(out, 4, ["--iters", "4", "--blocks", "3", "--hsdp", "--mixed-precision",
                            "--prefetch", "1", "--fsdp-log", logs])
            rep = report_json(os.path.join(out, "run.db"))
            root = rep["fsdp"][0]
            self.assertEqual((root["world_size"], root["replicas"]), (2, 2))
            by = phases_of(rep)
            for u in fsdp_accounts(logs, 1)[0]["units"]:
                numel, fqn = u["padded_unsharded_numel"], u["fqn"]
                ag, rs, ar = (by[(fqn, p)] for p in ("forward_all_gather", "reduce_scatter",
                                                     "all_reduce"))
                self.assertEqual((ag["dtype"], ag["bytes"]), ("bfloat16", numel * 2))
                self.assertEqual((rs["dtype"], rs["bytes"]), ("float32", numel * 4))
                self.assertEqual((ar["op"], ar["carried_as"]), ("allreduce", None))
                self.assertEqual(ar["bytes"], numel // 2 * 4)
                self.assertEqual(ar["wire_bytes"], ar["bytes"])
            # blocks.1 and blocks.2 are prefetched by the block before them.
            for fqn in ("blocks.1", "blocks.2"):
                p = by[(fqn, "forward_all_gather")]
                self.assertEqual(p["prefetched"], p["calls"], fqn)
            self.assertEqual(by[("blocks.0", "forward_all_gather")]["prefetched"], 0)
            # blocks.0 asks for its own: its slack runs from the issue (late by
            # the all-gather's time), with no wait marked.
            self.assertLess(by[("blocks.0", "forward_all_gather")]["slack_us"], 0)
            self.check_waits(os.path.join(out, "run.db"))

    def check_waits(self, run_db):
        """A unit's wait is marked only after an all-gather of its own that
        was prefetched or async (flags 1, 2), once for each."""
        with sqlite3.connect(run_db) as db:
            rows = db.execute("SELECT rank, unit, kind, flags FROM fsdp_regions WHERE kind IN "
                              "('forward_all_gather', 'backward_all_gather', 'wait') "
                              "ORDER BY rank, start_ns").fetchall()
        pending, waits = collections.Counter(), 0
        for rank, unit, kind, flags in rows:
            if kind == "wait":
                self.assertGreater(pending[(rank, unit)], 0, (rank, unit))
                pending[(rank, unit)] -= 1
                waits += 1
            elif flags & 3:
                pending[(rank, unit)] += 1
        self.assertGreater(waits, 0)
        self.assertEqual(sum(pending.values()), 0)


@unittest.skipUnless(HAS_FSDP2, "this torch has no FSDP2 (torch.distributed.fsdp.fully_shard)")
class Launch(unittest.TestCase):
    def test_record_nproc_trains_as_torchrun_does(self):
        """3 ranks, bfloat16 parameters and float32 reductions, OMP_NUM_THREADS
        unset: `record --nproc 3` sets it to 1 as torchrun does, and the trained
        parameters are torchrun's bit for bit (with each rank's own thread
        pool, reductions split across other numbers of threads can round
        otherwise), the metrics file written every second beside."""
        env = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}
        torchrun = os.path.join(os.path.dirname(PY), "torchrun")
        args = ["--iters", "3", "--blocks", "2", "--mixed-precision", "--accumulate", "2"]
        with tempfile.TemporaryDirectory() as tmp:
            theirs, mine = os.path.join(tmp, "torchrun"), os.path.join(tmp, "record")
            res = subprocess.run([torchrun, "--nproc_per_node", "3", "--master_port",
                                  str(free_port()), EXAMPLE, *args, "--params-out", theirs],
                                 capture_output=True, text=True, timeout=600, env=env)
            # A rank's own error comes before torchrun's summary of the ranks.
            self.assertEqual(res.returncode, 0, res.stderr[:3000] + "\n...\n" + res.stderr[-1500:])
            prom = os.path.join(tmp, "job.prom")
            res = subprocess.run([DDPSCOPE, "record", "-o", os.path.join(tmp, "run"), "--nproc",
                                  "3", "--metrics-file", prom, "--metrics-every", "1", "--", PY,
                                  EXAMPLE, *args, "--params-out", mine],
                                 capture_output=True, text=True, timeout=600, env=env)
            self.assertEqual(res.returncode, 0, res.stderr[-2000:])
            self.assertIn("OMP_NUM_THREADS set to 1", res.stderr)
            same_params(self, theirs, mine, 3)
            self.check_accumulation(report_json(os.path.join(tmp, "run", "run.db")))
            self.check_live(os.path.join(tmp, "run"), prom)

    def check_live(self, out, prom):
        """The metrics file's last look (at the job's end) names every unit and
        phase the report names for the same window, with its size and its
        exposed time within 10 % (the live look reads the rank files, the
        report the merged run), and FSDP's exposed time per rank. (The live
        line's FSDP part: tests/reports/test_live.cpp; this job ends before a
        line would show whole steps.)"""
        samples = parse(prom)
        rep = report_window(out, samples)
        want = {(fqn or "(root)", phase): p for (fqn, phase), p in phases_of(rep).items()}
        got = {(l["unit"], l["phase"]): v
               for l, v in samples["ddpscope_fsdp_unit_exposed_seconds_per_step"]}
        self.assertEqual(set(got), set(want))
        for key, p in want.items():
            self.assertLessEqual(abs(got[key] * 1e6 - p["exposed_us"]), 0.10 * p["exposed_us"],
                                 f"{key}: {got[key] * 1e6:.1f} us in the metrics file, "
                                 f"{p['exposed_us']:.1f} us in the report")
        sizes = {(l["unit"], l["phase"]): v for l, v in samples["ddpscope_fsdp_unit_bytes"]}
        self.assertEqual(sizes, {k: p["bytes"] for k, p in want.items()})
        ranks = samples["ddpscope_fsdp_exposed_comm_seconds_per_step"]
        self.assertEqual(sorted(int(l["rank"]) for l, _ in ranks), [0, 1, 2])
        self.assertTrue(all(v > 0 for _, v in ranks), ranks)

    def check_accumulation(self, rep):
        """Two micro-batches a step, the first without gradient sync and without
        resharding after backward: a step is both (3 steps, not 6). Each block
        all-gathers once in forward (after the first micro-batch's backward it
        stays unsharded), in both backwards (it reshards after forward), and
        reduce-scatters once."""
        self.assertEqual((rep["iterations"]["count"], rep["iterations"]["warmup"]), (3, 1))
        by = phases_of(rep)
        for fqn in ("blocks.0", "blocks.1"):
            per_step = [by[(fqn, p)]["per_iteration"] for p in
                        ("forward_all_gather", "backward_all_gather", "reduce_scatter")]
            self.assertEqual(per_step, [1.0, 2.0, 1.0], fqn)
        self.assertEqual(by[("", "reduce_scatter")]["per_iteration"], 1.0)


@unittest.skipUnless(HAS_FSDP2, "this torch has no FSDP2 (torch.distributed.fsdp.fully_shard)")
class Both(unittest.TestCase):
    def test_ddp_and_fsdp_in_one_step(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "run")
            record(out, 2, ["--iters", "4", "--blocks", "2", "--ddp-head",
                            "--no-reshard-after-forward"])
            rep = report_json(os.path.join(out, "run.db"))
            self.assertEqual(len(rep["ddp"]), 1)
            self.assertEqual(rep["ddp"][0]["buckets_from"], "ddp")
            self.assertEqual(rep["compute_source"], "backward-window")  # DDP's iterations
            self.assertEqual(len(rep["fsdp"][0]["units"]), 3)
            roles = {r["role"]: r["calls"] for r in rep["roles"]}
            self.assertIn("ddp_bucket", roles)
            self.assertIn("fsdp_all_gather", roles)
            self.assertIn("fsdp_reduce_scatter", roles)
            total = sum(o["calls"] for o in rep["ops"])
            self.assertEqual(sum(roles.values()), total)
            # Not resharded after forward: backward needs no all-gather.
            units = rep["fsdp"][0]["units"]
            self.assertFalse(any(u["reshard_after_forward"] for u in units))
            self.assertFalse(any(p["phase"] == "backward_all_gather"
                                 for u in units for p in u["phases"]))
            # The head's one bucket per step: DDP's 10x10 weight and bias.
            self.assertEqual(rep["ddp"][0]["bucket_bytes"], [440])
            self.check_trace(trace_collectives(os.path.join(out, "run.db"), tmp), rep)

    def check_trace(self, slices, rep):
        """Each slice labelled as the report counts it: the roles' calls
        alike, DDP's all-reduces by bucket, FSDP's by unit and phase."""
        roles = {r["role"]: r["calls"] for r in rep["roles"]}
        self.assertEqual(collections.Counter(e["args"].get("role", "unknown") for e in slices),
                         roles)
        for e in slices:
            a = e["args"]
            if a.get("role") == "ddp_bucket":
                self.assertEqual((e["name"], a["bucket"]), ("allreduce bucket 0", 0))
            if a.get("role") == "fsdp_reduce_scatter":
                self.assertEqual(a["carried_as"], "allreduce")
                self.assertEqual(e["name"], "reduce_scatter " + a["unit"])
        phases = {(u["fqn"] or "(root)", p["phase"]) for u in rep["fsdp"][0]["units"]
                  for p in u["phases"]}
        self.assertEqual({(e["args"]["unit"], e["args"]["phase"]) for e in slices
                          if "unit" in e["args"]}, phases)


@unittest.skipUnless(HAS_FSDP2, "this torch has no FSDP2 (torch.distributed.fsdp.fully_shard)")
class Composed(unittest.TestCase):
    def test_checkpointed_and_compiled_blocks(self):
        """Each block checkpointed, then compiled, then sharded. Backward runs
        each block's forward again inside FSDP's pre-backward, where the unit
        is unsharded already: still one all-gather per phase and step, named
        by its unit, and sizes equal FSDP's account. The hook's wrappers pass
        their call on untouched while dynamo traces (a unit it lost there
        would miss its phases)."""
        args = ["--iters", "4", "--blocks", "3", "--checkpoint", "--compile"]
        with tempfile.TemporaryDirectory() as tmp:
            out, logs, params = (os.path.join(tmp, d) for d in ("run", "log", "params"))
            record(out, 2, [*args, "--fsdp-log", logs, "--params-out", params])
            rep = report_json(os.path.join(out, "run.db"))
            self.assertEqual((rep["iterations"]["count"], rep["iterations"]["warmup"]), (4, 1))
            by = phases_of(rep)
            want = {("", "forward_all_gather"), ("", "reduce_scatter")}
            for u in fsdp_accounts(logs, 1)[0]["units"]:
                if u["fqn"]:
                    want |= {(u["fqn"], p) for p in ("forward_all_gather", "backward_all_gather",
                                                     "reduce_scatter")}
                for phase in ("forward_all_gather", "reduce_scatter"):
                    self.assertEqual(by[(u["fqn"], phase)]["bytes"],
                                     u["padded_unsharded_numel"] * 4, (u["fqn"], phase))
            self.assertEqual(set(by), want)
            for key, p in by.items():
                self.assertEqual(p["per_iteration"], 1.0, key)
            plain = os.path.join(tmp, "plain")
            _, codes = run_plain(2, [*args, "--params-out", plain], EXAMPLE)
            self.assertEqual(codes, [0, 0])
            same_params(self, params, plain, 2)


@unittest.skipUnless(HAS_FSDP2, "this torch has no FSDP2 (torch.distributed.fsdp.fully_shard)")
class Roots(unittest.TestCase):
    def test_two_roots_each_with_its_units(self):
        """The second model (its forward runs first: root 0) holds no
        parameters of its own, so its first unit is a child's; the root is
        still named by its own module, Sequential."""
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "run")
            record(out, 2, ["--iters", "4", "--blocks", "2", "--second-root", "2"])
            run_db = os.path.join(out, "run.db")
            rep = report_json(run_db)
            roots = [(r["module"], [u["fqn"] for u in r["units"]]) for r in rep["fsdp"]]
            self.assertEqual(roots, [("Sequential", ["0", "1"]),
                                     ("Model", ["", "blocks.0", "blocks.1"])])
            # The terminal: each root's line, then its own table.
            lines = report(run_db).splitlines()
            heads = [i for i, l in enumerate(lines) if l.startswith("FSDP root ")]
            self.assertEqual(len(heads), 2, lines)
            for h, r in zip(heads, rep["fsdp"]):
                self.assertTrue(lines[h + 1].startswith("unit "), lines[h + 1])
                end = next(i for i in range(h + 1, len(lines)) if lines[i].startswith("FSDP "))
                names = [l.split()[0] for l in lines[h + 2:end]]
                self.assertEqual(names, [u["fqn"] or "(root)" for u in r["units"]
                                         for _ in u["phases"]])
            # The page too: each root's paragraph, then its own table.
            html = os.path.join(tmp, "r.html")
            report(run_db, "--html", html)
            with open(html) as f:
                page = f.read()
            section = page[page.index('<section id="fsdp">'):]
            section = section[:section.index("</section>")]
            parts = section.split("<p>FSDP root ")[1:]
            self.assertEqual(len(parts), 2)
            for part, r in zip(parts, rep["fsdp"]):
                self.assertTrue(part.startswith(f"{r['root']} ({r['module']})"), part[:80])
                self.assertEqual(part.count("<table>"), 1)
                self.assertEqual(part.count("<tr>") - 1, sum(len(u["phases"]) for u in r["units"]))
            # `check`: the two roots' units "0" and "1" do not collide.
            res = subprocess.run([DDPSCOPE, "check", "--baseline", run_db, "--candidate", run_db,
                                  "--metric", "fsdp"], capture_output=True, text=True, timeout=300)
            self.assertEqual(res.returncode, 0, res.stdout + res.stderr)
            units = sorted(l.split("FSDP unit ")[1].split(":")[0]
                           for l in res.stdout.splitlines() if "FSDP unit " in l)
            first, second = (str(r["root"]) for r in rep["fsdp"])
            self.assertEqual(units, sorted([f"0 of root {first}", f"1 of root {first}",
                                            f"(root) of root {second}",
                                            f"blocks.0 of root {second}",
                                            f"blocks.1 of root {second}"]))


def line_of(text, after=None):
    """The example's line number of `text` (the first after the line `after`)."""
    with open(EXAMPLE) as f:
        lines = f.read().splitlines()
    start = lines.index(after) if after else 0
    return next(i + 1 for i in range(start, len(lines)) if text in lines[i])


@unittest.skipUnless(HAS_FSDP2, "this torch has no FSDP2 (torch.distributed.fsdp.fully_shard)")
class Hang(unittest.TestCase):
    def test_the_waited_for_all_gather_is_named_by_unit(self):
        """Rank 1 stops for good after blocks.1's forward in step 3 (0: the
        first); rank 0 goes on to blocks.2's forward all-gather and waits. The
        hook notes a collective when it returns, so the one waited in is named
        from the step before; the one rank 1 completed last from its own."""
        job = ["--iters", "8", "--blocks", "3", "--stall-rank", "1", "--stall-at", "3",
               "--stall-block", "1"]
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "run")
            # The timeout guards a test that would hang; the job ends itself.
            res = record(out, 2, job, ["--hang-after", "10"], check=False)
            self.assertEqual(res.returncode, 143, res.stderr[-3000:])
            self.assertIn("FSDP blocks.2 forward_all_gather of iteration 3", res.stderr)
            rep = report_json(os.path.join(out, "run.db"))
            self.assertEqual(len(rep["hangs"]), 1, rep["hangs"])
            h = rep["hangs"][0]
            self.assertEqual((h["waiting_ranks"], h["missing_ranks"]), ([0], [1]))
            self.assertEqual((h["fsdp"], h["iteration"], h["bucket"]),
                             ({"unit": "blocks.2", "phase": "forward_all_gather"}, 3, None))
            self.assertEqual(h["bytes"],
                             phases_of(rep)[("blocks.2", "forward_all_gather")]["bytes"])
            last = h["missing"][0]["last_completed"]
            self.assertEqual(last["fsdp"], {"unit": "blocks.1", "phase": "forward_all_gather"})
            self.assertEqual(last["seq"], h["seq"] - 1)
            stacks = {s["rank"]: s for s in h["stacks"]}
            # Rank 0's own line is the model's call of blocks.2, not the hook's
            # wrapper of torch.distributed, which sits between torch's frames.
            forward = line_of("x = block(x)")
            self.assertTrue(stacks[0]["user_frame"].endswith(f"fsdp_train.py:{forward} in forward"),
                            stacks[0])
            sleep = line_of("time.sleep(1)", "def stall():")
            self.assertTrue(stacks[1]["frames"][0].endswith(f"fsdp_train.py:{sleep} in stall"),
                            stacks[1])


if __name__ == "__main__":
    sys.path.insert(0, os.path.join(ROOT, "tests", "support"))
    import ctest_unittest  # noqa: E402

    ctest_unittest.main(argv=[sys.argv[0]] + sys.argv[1:])
