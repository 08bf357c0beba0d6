"""How scripts/gpu_check.sh starts its jobs: ranks under scripts/onegpu_rank.sh
(each its own NCCL_HOSTID, so NCCL runs two or three ranks on one GPU),
`ddpscope record` and `report` around them, the tuner's ranks, and what NCCL
printed when it refused them. The checks are in gpu_check_ranks.py; tests/gpu_check
runs both on CPU. Standard library only.
"""
import json
import os
import re
import socket
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
ONEGPU_RANK = os.path.join(HERE, "onegpu_rank.sh")
# What NCCL prints when it refuses the ranks (its duplicate-GPU check) or fails
# to connect them: the lines a reader of the check's output must see.
REFUSAL = re.compile(r"Duplicate GPU|NCCL WARN|NCCL error|ncclInvalidUsage|ncclSystemError|"
                     r"ncclInternalError|ncclRemoteError|DistBackendError")


def nccl_refusal(text):
    """The lines of a failed job's output that say why NCCL refused or failed."""
    return [line.strip() for line in text.splitlines() if REFUSAL.search(line)]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rank_env(rank, nproc, port, extra=None):
    """What torchrun gives one rank (the plain runs and the tuner's ranks)."""
    return dict(os.environ, **(extra or {}), RANK=str(rank), LOCAL_RANK=str(rank),
                WORLD_SIZE=str(nproc), LOCAL_WORLD_SIZE=str(nproc), MASTER_ADDR="127.0.0.1",
                MASTER_PORT=str(port))


def run_ranks(cmd, nproc, timeout, extra_env=None):
    """`cmd` as nproc local ranks, each under onegpu_rank.sh; (exit codes, output)."""
    port = free_port()
    procs = [subprocess.Popen([ONEGPU_RANK] + cmd, env=rank_env(r, nproc, port, extra_env),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for r in range(nproc)]
    outs = []
    try:
        for p in procs:
            outs.append(p.communicate(timeout=timeout)[0])
    except subprocess.TimeoutExpired:
        outs.append(f"timed out after {timeout} s")
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    return [p.returncode for p in procs], "".join(outs)


def record_cmd(build, out, nproc, job, flags=()):
    """`ddpscope record` starting nproc ranks, each under onegpu_rank.sh."""
    return [os.path.join(build, "ddpscope"), "record", "-o", out, "--nproc", str(nproc), *flags,
            "--", ONEGPU_RANK, sys.executable] + job


def tune_ranks(build, work, nproc, backend, extra_env=None, timeout=240):
    """`ddpscope tune` as nproc ranks under this check acting as the launcher
    (the tuner's own --nproc gives every rank the same environment, and a rank
    here needs its own NCCL_HOSTID); the results JSON rank 0 wrote, or None."""
    results = os.path.join(work, f"tune-{backend}-{nproc}")
    path = results + ".json"
    cmd = [os.path.join(build, "ddpscope"), "tune", "--workload", "preset:resnet50",
           "--backend", backend, "--bucket-mb", "1,25", "--iters", "5", "--warmup", "2",
           "--results-dir", results, "--json", path]
    print("$ " + " ".join(cmd) + f"   (x{nproc}, each under onegpu_rank.sh)")
    codes, out = run_ranks(cmd, nproc, timeout, extra_env)
    print("\n".join("  " + l for l in out.strip().splitlines()[-12:]))
    ok = check_exit(codes, out)
    if not ok or not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def check_exit(codes, out):
    if all(c == 0 for c in codes):
        return True
    for line in nccl_refusal(out)[:6]:
        print("  NCCL: " + line)
    return False


def ddp_job(out, device, iters, shape, extra=()):
    return [os.path.join(ROOT, "examples", "ddp_train.py"), "--device", device,
            "--iters", str(iters), "--layers", str(shape["layers"]),
            "--width", str(shape["width"]), "--batch", str(shape["batch"]),
            "--bucket-cap-mb", str(shape["bucket_cap_mb"]), "--ddp-log", os.path.join(out, "ddp"),
            "--params-out", os.path.join(out, "params"), *extra]


def record_ranks(check, build, out, nproc, job, what, flags=(), timeout=300):
    cmd = record_cmd(build, out, nproc, job, flags)
    print("$ " + " ".join(cmd))
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return check(False, f"{what} ends within {timeout} s")
    print("\n".join("  " + l for l in r.stdout.strip().splitlines()[-4:]))
    if r.returncode != 0:
        check_exit([r.returncode], r.stdout + r.stderr)
        print("\n".join("  stderr: " + l for l in r.stderr.strip().splitlines()[-8:]))
    return check(r.returncode == 0, f"{what} exits 0 under record at {nproc} ranks "
                 f"(got {r.returncode})")


def report_json(build, out):
    path = os.path.join(out, "report.json")
    r = subprocess.run([os.path.join(build, "ddpscope"), "report", "-q",
                        os.path.join(out, "run.db"), "--json", path],
                       capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        print("  report: " + r.stderr.strip())
        return None
    with open(path) as f:
        return json.load(f)


def per_rank_json(folder, prefix, nproc):
    """What each rank's job wrote as FOLDER/<prefix>-rank<R>.json, by rank."""
    out = []
    for r in range(nproc):
        with open(os.path.join(folder, f"{prefix}-rank{r}.json")) as f:
            out.append(json.load(f))
    return out


def digests(params_dir, nproc):
    return [p["sha256"] for p in per_rank_json(params_dir, "params", nproc)]
