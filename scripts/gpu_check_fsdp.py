"""The FSDP2 check of scripts/gpu_check.sh: examples/fsdp_train.py at 2 NCCL
ranks on one GPU (each rank under scripts/onegpu_rank.sh), recorded, and its
report held to FSDP's own account. The checks are pure functions of the
report's JSON, FSDP's account and the run database: tests/gpu_check runs them
on a recorded Gloo run and doctored copies, so a check that cannot fail is
caught before a GPU is lent. Standard library only.

Every check is called as check(ok, what) -> ok (gpu_check.py prints it).
"""
import os
import sqlite3
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from gpu_check_launch import (ROOT, check_exit, digests, per_rank_json,  # noqa: E402
                              record_ranks, report_json, run_ranks)
from gpu_check_ranks import runs_op  # noqa: E402

ELEMENT_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2}
GPU_SHAPE = {"blocks": 4, "width": 1024, "batch": 64}


def fsdp_job(out, device, iters, shape, extra=()):
    return [os.path.join(ROOT, "examples", "fsdp_train.py"), "--device", device,
            "--iters", str(iters), "--blocks", str(shape["blocks"]), "--width", str(shape["width"]),
            "--batch", str(shape["batch"]), "--fsdp-log", os.path.join(out, "fsdp"),
            "--params-out", os.path.join(out, "params"), *extra]


def fsdp_accounts(log_dir, nproc):
    return per_rank_json(log_dir, "fsdp", nproc)


def phases_of(report):
    roots = report.get("fsdp") or []
    return {(u["fqn"], p["phase"]): p for r in roots for u in r["units"] for p in u["phases"]}


def check_roles(check, report, iters):
    """Every collective is FSDP's, no DDP is invented, and the steps are the job's."""
    roles = {r["role"]: r["calls"] for r in report.get("roles", [])}
    check(roles and all(r.startswith("fsdp_") for r in roles), f"every collective FSDP's: {roles}")
    check(report.get("ddp") == [] and report.get("buckets") == [],
          f"no DDP section: ddp {len(report.get('ddp') or [])}, "
          f"buckets {len(report.get('buckets') or [])}")
    it = report.get("iterations", {})
    check((it.get("count"), it.get("warmup")) == (iters, 1),
          f"steps: {it.get('count')} ({it.get('warmup')} warm-up), job ran {iters}")


def check_sizes(check, report, accounts, gpu):
    """Each unit's all-gather and reduce-scatter carry FSDP's own sizes, on every
    rank's account; the reduce-scatter is named one (Gloo carries it as an
    all-reduce: said so; NCCL runs it)."""
    by = phases_of(report)
    bad = []
    for account in accounts:
        for u in account["units"]:
            ag, rs = by.get((u["fqn"], "forward_all_gather")), by.get((u["fqn"], "reduce_scatter"))
            want_ag = u["padded_unsharded_numel"] * ELEMENT_BYTES.get(u["all_gather_dtype"], 0)
            want_rs = u["padded_unsharded_numel"] * ELEMENT_BYTES.get(u["reduce_dtype"], 0)
            if not ag or not rs or (ag["bytes"], rs["bytes"]) != (want_ag, want_rs):
                bad.append(f"{u['fqn'] or '(root)'} rank {account['rank']}")
    check(by and not bad, f"unit sizes equal FSDP's account on every rank (wrong: {bad[:4]})")
    carried = {p["carried_as"] for (_, phase), p in by.items() if phase == "reduce_scatter"}
    want = {None} if gpu else {"allreduce"}
    check(carried == want, f"reduce-scatters carried as {carried}, expected {want}")
    per = {k: p["per_iteration"] for k, p in by.items() if p["per_iteration"] != 1.0}
    check(by and not per, f"each phase once per step (others: {list(per.items())[:3]})")


def check_exposure(check, report, gpu):
    """Exposed at most the collective's time; slack for every all-gather; on a
    GPU the compute kernels define both."""
    by = phases_of(report)
    over = [k for k, p in by.items() if p["exposed_us"] > p["median_us"] * 1.01 + 1]
    check(by and not over, f"exposed within each phase's median time (over: {over[:3]})")
    no_slack = [k for k, p in by.items() if "all_gather" in k[1] and p["slack_us"] is None]
    check(not no_slack, f"slack for every all-gather (missing: {no_slack[:3]})")
    if gpu:
        check(report.get("compute_source") == "kernels",
              f"compute from kernels: {report.get('compute_source')}")


def check_fsdp_kernels(check, db):
    """Every all-gather and reduce-scatter has NCCL kernels of its own op."""
    rows = db.execute("SELECT c.op, k.name FROM collectives c JOIN kernels k ON "
                      "k.collective_id = c.id AND k.kind = 'comm' "
                      "WHERE c.op IN ('allgather', 'reduce_scatter')").fetchall()
    wrong = sorted({f"{op}: {name[:50]}" for op, name in rows if not runs_op(name, op)})
    check(rows and not wrong, f"all-gathers and reduce-scatters run their own kernels "
          f"({len(rows)} links; wrong: {wrong[:3]})")
    unlinked = db.execute("SELECT count(*) FROM collectives c WHERE c.op IN ('allgather', "
                          "'reduce_scatter') AND NOT EXISTS (SELECT 1 FROM kernels k WHERE "
                          "k.collective_id = c.id)").fetchone()[0]
    check(unlinked == 0, f"every all-gather and reduce-scatter linked to a kernel "
          f"({unlinked} not)")


def fsdp_section(check, build, work, nproc, device="cuda", iters=8, shape=GPU_SHAPE):
    gpu = device == "cuda"
    out = os.path.join(work, f"fsdp-{nproc}")
    if not record_ranks(check, build, out, nproc, fsdp_job(out, device, iters, shape),
                        "the FSDP2 job"):
        return
    report = report_json(build, out)
    if not check(report is not None and report.get("fsdp"), "ddpscope report --json has fsdp"):
        return
    accounts = fsdp_accounts(os.path.join(out, "fsdp"), nproc)
    check_roles(check, report, iters)
    check_sizes(check, report, accounts, gpu)
    check_exposure(check, report, gpu)
    if gpu:
        check_fsdp_kernels(check, sqlite3.connect(os.path.join(out, "run.db")))
    plain = os.path.join(work, f"fsdp-plain-{nproc}")
    codes, text = run_ranks([sys.executable] + fsdp_job(plain, device, iters, shape), nproc, 300)
    if check(check_exit(codes, text), f"the FSDP2 job exits 0 without record at {nproc} ranks"):
        mine, theirs = digests(os.path.join(out, "params"), nproc), digests(
            os.path.join(plain, "params"), nproc)
        check(mine == theirs, f"parameters bit-identical with the plain run ({mine[0][:12]}.. "
              f"vs {theirs[0][:12]}..)")
