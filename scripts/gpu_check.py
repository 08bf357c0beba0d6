"""The checks behind scripts/gpu_check.sh (see there). Standard library only.

Every check runs, failed or not (a device lease is too short to find failures
one at a time); the exit code is 1 if any failed. --keep DIR copies the run
databases there for reading later.
"""
import argparse
import json
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time

import gpu_check_fsdp as fsdp
import gpu_check_ranks as ranks
import gpu_check_launch as launch

ITERS = 30
FAILED = []


def check(ok, what):
    print(f"  [{'ok' if ok else 'FAIL'}] {what}")
    if not ok:
        FAILED.append(what)
    return ok


def platform():
    probe = ("import torch, re\n"
             "torch.cuda.init()\n"
             "libs = sorted({l.split()[-1] for l in open('/proc/self/maps') "
             "if re.search(r'lib(nccl|cupti|cudart)[^/]*\\.so', l)})\n"
             "print('torch', torch.__version__, 'cuda', torch.version.cuda, 'nccl', "
             "'.'.join(map(str, torch.cuda.nccl.version())))\n"
             "print('gpu', torch.cuda.get_device_name(0))\n"
             "print('loaded', ' '.join(libs))\n")
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    print(r.stdout.rstrip() or r.stderr.rstrip())
    loaded = next((l.split()[1:] for l in r.stdout.splitlines() if l.startswith("loaded")), [])
    return next((l for l in loaded if "libnccl" in l), "")


def print_stderr(r):
    if r.stderr.strip():
        print("stderr: " + r.stderr.strip().replace("\n", "\nstderr: "))


def record(build, out, job, what, flags=()):
    cmd = [os.path.join(build, "ddpscope"), "record", "-o", out, "--nproc", "1", *flags, "--",
           sys.executable] + job
    print("$ " + " ".join(cmd))
    r = subprocess.run(cmd, capture_output=True, text=True)
    print(r.stdout.rstrip())
    print_stderr(r)
    return check(r.returncode == 0, f"{what} exits 0 under record (got {r.returncode})")


def ddp_job(out):
    return ["examples/ddp_train.py", "--device", "cuda", "--iters", str(ITERS), "--layers", "8",
            "--width", "1024", "--bucket-cap-mb", "1", "--nvtx", "--ddp-log",
            os.path.join(out, "ddp"), "--params-out", os.path.join(out, "params")]


def check_unperturbed(recorded, work):
    """The same job without ddpscope trains to the same parameters, bit for bit."""
    plain = os.path.join(work, "plain")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = dict(os.environ, RANK="0", LOCAL_RANK="0", WORLD_SIZE="1", LOCAL_WORLD_SIZE="1",
               MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    r = subprocess.run([sys.executable] + ddp_job(plain), env=env, capture_output=True, text=True)
    if not check(r.returncode == 0, f"the DDP job exits 0 without record (got {r.returncode})"):
        return
    digests = []
    for d in (recorded, plain):
        with open(os.path.join(d, "params", "params-rank0.json")) as f:
            digests.append(json.load(f)["sha256"])
    print(f"parameters sha256: recorded {digests[0][:16]}..., plain {digests[1][:16]}...")
    check(digests[0] == digests[1], "parameters after training equal those of the unrecorded run")


def query(db, sql):
    return db.execute(sql).fetchall()


def check_ddp_db(out):
    db = sqlite3.connect(os.path.join(out, "run.db"))
    kinds = dict(query(db, "SELECT kind, count(*) FROM kernels GROUP BY kind"))
    print(f"kernels by kind: {kinds}")
    for kind, name, n in query(db, "SELECT kind, name, count(*) FROM kernels GROUP BY kind, name "
                               "ORDER BY count(*) DESC LIMIT 8"):
        print(f"  {kind:8} {n:6}  {name[:90]}")
    check(kinds.get("compute", 0) > 0, "compute kernels recorded")
    with open(os.path.join(out, "ddp", "ddp-rank0.json")) as f:
        ddp = json.load(f)
    want = ddp["bucket_sizes"] + ddp["rebuilt_bucket_sizes"] * (ITERS - 1)
    rows = query(db, "SELECT bytes, timing FROM collectives WHERE op='allreduce' ORDER BY seq")
    got = [b for b, _ in rows][: len(want)]
    print(f"DDP buckets: first {ddp['bucket_sizes']}, rebuilt {ddp['rebuilt_bucket_sizes']}")
    check(got == want, f"all-reduce sizes equal DDP's buckets ({len(want)} calls)")
    timing = {}
    for _, t in rows[: len(want)]:
        timing[t] = timing.get(t, 0) + 1
    print(f"bucket all-reduce timing sources: {timing} (one rank: NCCL runs nothing in place)")
    steps = query(db, "SELECT count(*) FROM ranges WHERE name LIKE 'step%'")[0][0]
    check(steps >= ITERS, f"NVTX step ranges recorded ({steps})")
    syncs = query(db, "SELECT call, count(*) FROM syncs GROUP BY call")
    check(sum(n for _, n in syncs) > 0, f"CUDA waits recorded {dict(syncs)}")
    meta = dict(query(db, "SELECT key, value FROM meta WHERE key LIKE 'cupti%'"))
    print(f"CUPTI: {meta}")


def check_nccl_plugin(out):
    """NCCL loaded ddpscope as its profiler plugin (record sets NCCL_PROFILER_PLUGIN)."""
    db = sqlite3.connect(os.path.join(out, "run.db"))
    comms = query(db, "SELECT comm_hash, nranks, comm_rank, comm_id FROM nccl_plugin_comms")
    print(f"NCCL plugin communicators (hash, nranks, rank, joined comm_id): {comms}")
    check(len(comms) > 0, "NCCL initialised ddpscope's profiler plugin for its communicators")
    rows = query(db, "SELECT func, algo, proto, nchannels, count(*), "
                 "sum(collective_id IS NOT NULL) FROM nccl_plugin_collectives "
                 "GROUP BY func, algo, proto, nchannels")
    for func, algo, proto, ch, n, joined in rows:
        print(f"  NCCL chose {func} {algo}/{proto} x{ch}: {n} calls, {joined} joined")
    if not rows:
        print("  no collective reached the plugin: with one rank NCCL short-cuts every "
              "collective (no kernel plan, so no profiler events)")
    kch = query(db, "SELECT count(*) FROM nccl_kernel_channels")[0][0]
    steps = query(db, "SELECT count(*) FROM nccl_proxy_steps")[0][0]
    print(f"  kernel channels: {kch}, proxy steps: {steps}")


def check_ops_db(out):
    """The calls that do run on one GPU are CUPTI-timed and own their activity."""
    with open(os.path.join(out, "ops.json")) as f:
        issued = json.load(f)["issued"]
    db = sqlite3.connect(os.path.join(out, "run.db"))
    rows = query(db, "SELECT c.op, c.redop, c.bytes, c.timing, "
                 "(SELECT group_concat(k.kind || ':' || k.name) FROM kernels k "
                 " WHERE k.collective_id = c.id) FROM collectives c "
                 "WHERE c.op IN ('allreduce','allgather') AND c.bytes > 4 ORDER BY c.seq")
    seen = {}
    for op, redop, nbytes, timing, acts in rows:
        key = (op, redop)
        seen.setdefault(key, []).append((nbytes, timing, acts or ""))
    for op, redop, nbytes in issued[:3]:
        got = seen.get((op, redop), [])
        print(f"{op}/{redop}: {len(got)} rows, timing "
              f"{sorted({t for _, t, _ in got})}, activity {sorted({a for _, _, a in got})[:2]}")
    n = sum(1 for i in issued if i[:2] == ["allreduce", "avg"])
    avg = seen.get(("allreduce", "avg"), [])
    check(len(avg) == n and all(t == "cupti" and a.startswith("comm:") for _, t, a in avg),
          f"AVG all-reduces ({n}) CUPTI-timed by their own comm kernel")
    gather = seen.get(("allgather", "none"), [])
    check(len(gather) == n and all(t == "cupti" and "memcpy" in a for _, t, a in gather),
          f"all-gathers ({n}) CUPTI-timed by their device-to-device copy")
    inplace = seen.get(("allreduce", "sum"), [])
    check(len(inplace) >= n and all(t != "cupti" for _, t, _ in inplace),
          f"in-place SUM all-reduces ({n}) launch nothing and stay host/event-timed")


def check_event_fallback(out):
    """Without CUPTI, CUDA events around each call time it on its stream."""
    db = sqlite3.connect(os.path.join(out, "run.db"))
    rows = query(db, "SELECT op, timing, count(*) FROM collectives WHERE bytes > 4 "
                 "GROUP BY op, timing")
    print(f"timing sources with --no-cupti: {rows}")
    kernels = query(db, "SELECT count(*) FROM kernels")[0][0]
    check(kernels == 0, f"no CUPTI records with --no-cupti ({kernels})")
    check(rows and all(t == "event" for _, t, _ in rows),
          "every all-reduce and all-gather is timed by CUDA events")


def check_report(build, out):
    path = os.path.join(out, "report.json")
    r = subprocess.run([os.path.join(build, "ddpscope"), "report", os.path.join(out, "run.db"),
                        "--json", path], capture_output=True, text=True)
    print(r.stdout.rstrip())
    if not check(r.returncode == 0, "ddpscope report runs"):
        print(r.stderr.rstrip())
        return
    with open(path) as f:
        report = json.load(f)
    buckets = report.get("buckets", [])
    print(f"{'bucket':>6} {'bytes':>10} {'calls':>6} {'median us':>10} {'overlap %':>10}")
    for b in buckets:
        print(f"{b['index']:>6} {b['bytes']:>10} {b['calls']:>6} {b['median_us'] or 0:>10.1f} "
              f"{b['overlap_pct'] or 0:>10.1f}")
    check(len(buckets) > 0, "the report finds DDP's buckets")
    sources = [d.get("buckets_from") for d in report.get("ddp", [])]
    check(sources and all(s == "ddp" for s in sources),
          f"buckets come from DDP's own account (the Python start-up hook): {sources}")


def check_ddp_loops(build, nproc, timeout):
    """tests/ddp/test_ddp_loops.py on NCCL: ten training loops (loss logging,
    find_unused, join, accumulation, static graph, bucket views, an fp16 comm
    hook, two models, frozen layers, torch.compile), each run plainly and
    recorded, the report held to DDP's own account and the parameters to the
    plain run's, bit for bit. Several ranks share the one GPU, each with its
    own NCCL_HOSTID (scripts/onegpu_rank.sh)."""
    env = dict(os.environ, DDPSCOPE_BIN=os.path.abspath(os.path.join(build, "ddpscope")),
               DDPSCOPE_LOOPS_DEVICE="cuda", DDPSCOPE_LOOPS_NPROC=str(nproc),
               DDPSCOPE_LOOPS_RANK_PREFIX=launch.ONEGPU_RANK, PYTHONUNBUFFERED="1")
    cmd = [sys.executable, "tests/ddp/test_ddp_loops.py"]
    print(f"$ DDPSCOPE_LOOPS_DEVICE=cuda DDPSCOPE_LOOPS_NPROC={nproc} "
          "DDPSCOPE_LOOPS_RANK_PREFIX=scripts/onegpu_rank.sh " + " ".join(cmd))
    try:
        r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        check(False, f"the DDP training loops on NCCL end within {timeout:.0f} s")
        return
    lines = r.stderr.strip().splitlines()
    for line in lines:
        if line.startswith("test_") or line.startswith("Ran ") or line in ("OK", "FAILED"):
            print("  " + line)
    if r.returncode != 0:  # every failure in full: a lease is too short to rerun for them
        print("\n".join(l for l in lines if not l.startswith("test_")))
    check(r.returncode == 0, f"the DDP training loops on NCCL at {nproc} rank(s) match DDP's "
          f"account (exit {r.returncode})")


def check_tuner_nccl(build, work, nccl):
    """The tuner's NCCL backend replays a workload on the GPU with the job's NCCL.

    One rank: NCCL runs nothing for an in-place all-reduce, so this proves the
    backend's driver calls, events and clock anchor, not a ring's timing.
    """
    path = os.path.join(work, "tune.json")
    env = dict(os.environ, DDPSCOPE_NCCL_LIBRARY=nccl)
    cmd = [os.path.join(build, "ddpscope"), "tune", "--workload", "preset:resnet50", "--backend",
           "nccl", "--bucket-mb", "1,25", "--nproc", "1", "--iters", "5", "--warmup", "2",
           "--json", path]
    print(f"$ DDPSCOPE_NCCL_LIBRARY={nccl} " + " ".join(cmd))
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    print(r.stdout.rstrip())
    print_stderr(r)
    if not check(r.returncode == 0, f"tune --backend nccl exits 0 (got {r.returncode})"):
        return
    with open(path) as f:
        results = json.load(f)["results"]
    check(len(results) == 2 and all(x["backend"] == "nccl" and x["iterations"] == 5 and
                                    x["iter_ms_median"] > 0 and x["comm_ms_median"] >= 0
                                    for x in results),
          "tune --backend nccl measured both bucket sizes on the GPU")


def check_tuner_rings(build, work, nccl, nproc):
    """The tuner's NCCL backend timing a real ring: nproc ranks on the GPU,
    started by this check (each its own NCCL_HOSTID)."""
    tuned = launch.tune_ranks(build, work, nproc, "nccl", {"DDPSCOPE_NCCL_LIBRARY": nccl})
    ranks.check_tuner(check, tuned, "nccl", nproc)


def nccl2_available():
    """Whether this torch can build ProcessGroupNCCL2 (torchcomms) for "nccl":
    torch 2.15 does unless TORCH_DIST_USE_NCCL2=0; its switch names it."""
    probe = ("import inspect, torch.distributed.distributed_c10d as c\n"
             "print('TORCH_DIST_USE_NCCL2' in inspect.getsource(c))")
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    return r.stdout.strip() == "True"


def ranks_sections(args, work):
    """The ranks section at each count; where torch has the nccl2 engine, under
    it (torch's default) and under the legacy ProcessGroupNCCL."""
    nccl2 = nccl2_available()
    print("torch's NCCL backends: " + ("ProcessGroupNCCL2 (default) and the legacy "
          "ProcessGroupNCCL (TORCH_DIST_USE_NCCL2=0)" if nccl2 else
          "ProcessGroupNCCL only (this torch has no ProcessGroupNCCL2)"))
    for n in args.ranks.split(","):
        ranks.ranks_section(check, args.build, work, int(n))
        if nccl2:
            legacy = os.path.join(work, f"legacy-{n}")
            os.makedirs(legacy, exist_ok=True)
            os.environ["TORCH_DIST_USE_NCCL2"] = "0"
            try:
                print(f"-- {n} ranks again, TORCH_DIST_USE_NCCL2=0")
                ranks.ranks_section(check, args.build, legacy, int(n))
            finally:
                del os.environ["TORCH_DIST_USE_NCCL2"]


SECTIONS = ("ranks", "stall", "fsdp", "tuner", "loops", "one", "bench")


def one_rank(args, work, nccl):
    """World size 1: what CUPTI, NVTX and the CUDA hooks give on one rank."""
    ddp, ops = os.path.join(work, "ddp"), os.path.join(work, "ops")
    if record(args.build, ddp, ddp_job(ddp), "the DDP job"):
        check_ddp_db(ddp)
        check_nccl_plugin(ddp)
        check_report(args.build, ddp)
        check_unperturbed(ddp, work)
    if record(args.build, ops, ["scripts/gpu_check_ops.py", "--log",
                                os.path.join(ops, "ops.json")], "the NCCL ops job"):
        check_ops_db(ops)
        check_nccl_plugin(ops)
    events = os.path.join(work, "events")
    if record(args.build, events, ["scripts/gpu_check_ops.py", "--log",
                                   os.path.join(events, "ops.json")],
              "the NCCL ops job with --no-cupti", ["--no-cupti"]):
        check_event_fallback(events)
    if nccl:
        check_tuner_nccl(args.build, work, nccl)
    if args.keep:
        os.makedirs(args.keep, exist_ok=True)
        for name, d in (("ddp", ddp), ("ops", ops)):
            if os.path.exists(os.path.join(d, "run.db")):
                shutil.copy(os.path.join(d, "run.db"), os.path.join(args.keep, f"{name}.db"))


def benches(args):
    """Figures, not checks: CUPTI's correlation and its API records' host cost,
    the recorded NCCL job's step time against the plain one at each count
    of --bench-ranks, and the FSDP2 hook's cost per unit-phase."""
    for name in ("bench_cupti_correlation", "bench_cupti_api_overhead"):
        bench = os.path.join(args.build, name)
        if os.path.exists(bench):
            print(subprocess.run([bench], capture_output=True, text=True).stdout.rstrip())
    for n in args.bench_ranks.split(","):
        slowdown(args, int(n))
    fsdp_hook_cost(args)


def fsdp_hook_cost(args):
    """The FSDP2 hook's CPU cost per unit-phase (target: at most 20 us) on
    this machine's CPU, torch's fake group: the figure of
    docs/performance.md, from a host other than the project's VM."""
    cmd = [sys.executable, "bench/python_hook_overhead.py", "--fsdp", "--groups", "300",
           "--python", sys.executable]
    print("$ " + " ".join(cmd))
    env = dict(os.environ, DDPSCOPE_BUILD=args.build)
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=240)
    except subprocess.TimeoutExpired:
        print("python_hook_overhead: not finished in 240 s (no figure)")
        return
    print(r.stdout.rstrip())
    print_stderr(r)


def slowdown(args, nproc):
    cmd = ["bench/ddp_slowdown.sh", "--nproc", str(nproc), "--pairs", "3", "--iters", "40",
           "--warmup", "10",
           "--python", sys.executable, "--rank-prefix", launch.ONEGPU_RANK, "--layers",
           str(ranks.GPU_SHAPE["layers"]), "--width", str(ranks.GPU_SHAPE["width"]), "--batch",
           str(ranks.GPU_SHAPE["batch"]), "--", "--device", "cuda", "--bucket-cap-mb",
           str(ranks.GPU_SHAPE["bucket_cap_mb"])]
    print("$ " + " ".join(cmd))
    env = dict(os.environ, DDPSCOPE_BUILD=args.build)
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    print(r.stdout.rstrip())
    print_stderr(r)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build", required=True)
    p.add_argument("--keep", help="copy the one-rank run databases into this folder")
    p.add_argument("--sections", default=",".join(SECTIONS),
                   help="which, in the order given: ranks (2 and 3 NCCL ranks on the GPU), stall "
                   "(a rank stuck for good under --hang-after 30, CUPTI on), fsdp (an FSDP2 job at 2 "
                   "NCCL ranks against FSDP's own account), tuner "
                   "(2-rank NCCL replay), loops (ten DDP loops at 2 ranks), one (world size "
                   "1), bench (figures)")
    p.add_argument("--ranks", default="2,3", help="rank counts of the ranks section")
    p.add_argument("--bench-ranks", default="2", help="rank counts of the bench's slowdown")
    p.add_argument("--budget", type=float, default=470,
                   help="seconds: a section that would start after this is not run (said so)")
    args = p.parse_args()
    wanted = args.sections.split(",")
    unknown = [s for s in wanted if s not in SECTIONS]
    if unknown:
        print(f"gpu_check: unknown section {unknown[0]} (known: {', '.join(SECTIONS)})",
              file=sys.stderr)
        sys.exit(2)
    begin = time.monotonic()
    nccl = platform()
    work = tempfile.mkdtemp(prefix="ddpscope-gpu-check-")
    runs = {
        "ranks": lambda: ranks_sections(args, work),
        "stall": lambda: ranks.stall_section(check, args.build, work, 2),
        "fsdp": lambda: fsdp.fsdp_section(check, args.build, work, 2),
        "tuner": lambda: check_tuner_rings(args.build, work, nccl, 2),
        "loops": lambda: check_ddp_loops(args.build, 2,
                                         max(60, args.budget - (time.monotonic() - begin))),
        "one": lambda: one_rank(args, work, nccl),
        "bench": lambda: benches(args),
    }
    for name in dict.fromkeys(wanted):  # in the order asked, each once
        spent = time.monotonic() - begin
        if spent > args.budget:
            print(f"\n== {name}: not run ({spent:.0f} s spent of the {args.budget:.0f} s budget)")
            continue
        print(f"\n== {name} (at {spent:.0f} s)")
        runs[name]()
    print(f"\ngpu_check: {time.monotonic() - begin:.0f} s in all")
    if FAILED:
        print(f"gpu_check: {len(FAILED)} check(s) FAILED: " + "; ".join(FAILED))
        sys.exit(1)
    print(f"gpu_check: all checks passed ({work})")


if __name__ == "__main__":
    main()
