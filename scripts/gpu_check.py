"""The checks behind scripts/gpu_check.sh (see there). Standard library only."""
import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile

ITERS = 30


def fail(what):
    print(f"gpu_check: FAILED: {what}")
    sys.exit(1)


def check(ok, what):
    print(f"  [{'ok' if ok else 'FAIL'}] {what}")
    if not ok:
        fail(what)


def record(build, out):
    cmd = [os.path.join(build, "ddpscope"), "record", "-o", out, "--nproc", "1", "--",
           sys.executable, "examples/ddp_train.py", "--device", "cuda", "--iters", str(ITERS),
           "--layers", "8", "--width", "1024", "--bucket-cap-mb", "1", "--nvtx",
           "--ddp-log", os.path.join(out, "ddp")]
    print("$ " + " ".join(cmd))
    r = subprocess.run(cmd, capture_output=True, text=True)
    print(r.stdout.rstrip())
    if r.stderr.strip():
        print("stderr: " + r.stderr.strip().replace("\n", "\nstderr: "))
    check(r.returncode == 0, f"the job exits 0 under record (got {r.returncode})")


def query(db, sql):
    return db.execute(sql).fetchall()


def expected_allreduces(out):
    with open(os.path.join(out, "ddp", "ddp-rank0.json")) as f:
        ddp = json.load(f)
    sizes = ddp["bucket_sizes"] + ddp["rebuilt_bucket_sizes"] * (ITERS - 1)
    return ddp, sizes


def check_db(out):
    db = sqlite3.connect(os.path.join(out, "run.db"))
    kinds = dict(query(db, "SELECT kind, count(*) FROM kernels GROUP BY kind"))
    print(f"kernels by kind: {kinds}")
    check(kinds.get("comm", 0) > 0, "communication kernels recorded (ncclDevKernel_*)")
    check(kinds.get("compute", 0) > 0, "compute kernels recorded")
    ddp, want = expected_allreduces(out)
    rows = query(db, "SELECT bytes, timing FROM collectives WHERE op='allreduce' ORDER BY seq")
    got = [b for b, _ in rows][: len(want)]
    print(f"DDP buckets: first {ddp['bucket_sizes']}, rebuilt {ddp['rebuilt_bucket_sizes']}")
    check(got == want, f"all-reduce sizes equal DDP's buckets ({len(want)} calls)")
    timed = [t for _, t in rows[: len(want)]]
    check(all(t == "cupti" for t in timed), f"every bucket all-reduce is CUPTI-timed "
          f"({timed.count('cupti')}/{len(timed)})")
    linked = query(db, "SELECT count(*) FROM kernels WHERE kind='comm' AND collective_id IS NOT NULL")
    check(linked[0][0] > 0, f"communication kernels linked to their collectives ({linked[0][0]})")
    steps = query(db, "SELECT count(*) FROM ranges WHERE name LIKE 'step%'")[0][0]
    check(steps >= ITERS, f"NVTX step ranges recorded ({steps})")
    syncs = query(db, "SELECT call, count(*) FROM syncs GROUP BY call")
    check(sum(n for _, n in syncs) > 0, f"CUDA waits recorded {dict(syncs)}")
    meta = dict(query(db, "SELECT key, value FROM meta WHERE key LIKE 'cupti%'"))
    print(f"CUPTI: {meta}")
    return rows


def check_report(build, out):
    path = os.path.join(out, "report.json")
    r = subprocess.run([os.path.join(build, "ddpscope"), "report", os.path.join(out, "run.db"),
                        "--json", path], capture_output=True, text=True)
    print(r.stdout.rstrip())
    check(r.returncode == 0, "ddpscope report runs")
    with open(path) as f:
        report = json.load(f)
    buckets = report.get("buckets", [])
    print(f"{'bucket':>6} {'bytes':>10} {'calls':>6} {'median us':>10} {'overlap %':>10}")
    for b in buckets:
        print(f"{b['index']:>6} {b['bytes']:>10} {b['calls']:>6} {b['median_us'] or 0:>10.1f} "
              f"{b['overlap_pct'] or 0:>10.1f}")
    check(any((b.get("overlap_pct") or 0) > 0 for b in buckets),
          "non-zero overlap of bucket all-reduces with compute kernels")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build", required=True)
    args = p.parse_args()
    out = tempfile.mkdtemp(prefix="ddpscope-gpu-check-")
    os.rmdir(out)
    record(args.build, out)
    check_db(out)
    check_report(args.build, out)
    bench = os.path.join(args.build, "bench_cupti_correlation")
    if os.path.exists(bench):
        print(subprocess.run([bench], capture_output=True, text=True).stdout.rstrip())
    print(f"gpu_check: all checks passed ({out})")


if __name__ == "__main__":
    main()
