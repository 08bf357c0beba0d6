#!/usr/bin/env python3
"""The soak (bench/soak.sh MINUTES): a long DDP job recorded over and over,
ranks killed with kill -9 at random points, then the memory of a long
recording against the same job without ddpscope. Figures, never a test.

Half the time, kill rounds: `ddpscope record --nproc 2` of bench/soak_job.py
(forking DataLoader workers, a background thread, a signal every 50 ms); once
it has trained for a moment, after a random 1-10 s, one rank chosen at random
is killed with SIGKILL (the launcher then stops the other, as torchrun does).
Per round:
- the rank files are exactly rank-0.db and rank-1.db (a forked worker
  records nothing) and each reads: `ddpscope report -q rank-R.db --json`
  exits 0, and `ddpscope merge` of both;
- lost: how long before the kill the killed rank's last recorded collective
  ended (wall clock). Its writer commits every --flush-ms, so at most two
  flush intervals may be lost (one being filled, one being written) plus the
  gap between the job's own steps (nothing to record between them): the
  bound is 2 x flush + the longest step gap of the last second.
The other half, memory: the job recorded for a quarter of the time, then run
for as long by torchrun without ddpscope; rank 0's resident memory sampled
every second, all of it and its anonymous part (the heap, the injector's
rings; the rest holds the rank file's mapped pages, which grow with it); the
growth over the second half of each run (MiB per minute).
SOAK_PHASES=kill or =memory runs one half (for MINUTES/2 either way);
SOAK_RECORD_FLAGS adds flags to the memory half's `record`; SOAK_PRELOAD=1
runs it under torchrun with the injector preloaded instead.
"""
import contextlib
import glob
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DDPSCOPE = os.path.join(os.environ.get("DDPSCOPE_BUILD", os.path.join(ROOT, "build")), "ddpscope")
VENV = os.path.join(ROOT, ".venv", "bin")
PYTHON = os.path.join(VENV, "python") if os.path.exists(os.path.join(VENV, "python")) else "python3"
JOB = os.path.join(ROOT, "bench", "soak_job.py")
FLUSH_MS = 200
# The rank writer's SQLite page cache (profiler/store/writer.cpp) is 4 MiB of
# heap, filled as the rank file grows: the heap grows until then, by design.
# Its growth after the rank file held twice that is what the injector adds.
CACHE_FULL_MIB = 8
# SOAK_RECORD_FLAGS: more flags for the memory half's `record` (e.g.
# --no-python-hook, to tell the injector's memory from the start-up hook's).
RECORD_FLAGS = os.environ.get("SOAK_RECORD_FLAGS", "").split()
# SOAK_PRELOAD=1: the memory half's recorded run is torchrun with the injector
# preloaded, as a user's own launcher would run it (no `record` around it).
PRELOAD_UNDER_TORCHRUN = os.environ.get("SOAK_PRELOAD") == "1"
INJECT = os.path.join(os.path.dirname(DDPSCOPE), "libddpscope_inject.so")


def wait_for(predicate, seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def steps(job_dir, rank):
    """(step, wall ns) the rank logged after each step."""
    try:
        with open(os.path.join(job_dir, f"steps-rank{rank}")) as f:
            return [tuple(map(int, line.split())) for line in f if len(line.split()) == 2]
    except FileNotFoundError:
        return []


def pid_of(job_dir, rank):
    with open(os.path.join(job_dir, f"pid-rank{rank}")) as f:
        return int(f.read())


def last_collective_wall_ns(rank_file):
    """The end of the rank's last recorded collective, on the wall clock."""
    con = sqlite3.connect(f"file:{rank_file}?mode=ro", uri=True)
    try:
        offset = con.execute("SELECT clock_offset_ns FROM processes").fetchone()[0]
        end = con.execute("SELECT max(coalesce(end_ns, host_end_ns)) FROM collectives").fetchone()[0]
        return None if end is None else end + offset
    finally:
        con.close()


def kill_round(work, n):
    rec, job = os.path.join(work, f"round{n}"), os.path.join(work, f"job{n}")
    os.makedirs(job)
    record = subprocess.Popen(
        [DDPSCOPE, "record", "-o", rec, "--nproc", "2", "--flush-ms", str(FLUSH_MS), "--",
         PYTHON, JOB, "--out", job, "--seconds", "300"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if not wait_for(lambda: len(steps(job, 0)) >= 10 and len(steps(job, 1)) >= 10, 120):
        record.kill()
        return {"error": "the job did not start training within 120 s"}
    time.sleep(random.uniform(1, 10))
    victim = random.randrange(2)
    os.kill(pid_of(job, victim), signal.SIGKILL)
    killed_ns = time.time_ns()
    record.wait(timeout=300)
    result = {"victim": victim, "record_exit": record.returncode,
              "steps": len(steps(job, victim))}
    files = sorted(os.path.basename(f) for f in glob.glob(os.path.join(rec, "rank-*.db")))
    result["files_ok"] = files == ["rank-0.db", "rank-1.db"]
    result["readable"] = all(
        subprocess.run([DDPSCOPE, "report", "-q", os.path.join(rec, f), "--json",
                        os.path.join(work, "r.json")], capture_output=True).returncode == 0
        for f in files)
    merged = subprocess.run([DDPSCOPE, "merge", rec, "-o", os.path.join(work, f"run{n}.db")],
                            capture_output=True, text=True)
    result["merged"] = merged.returncode == 0
    last = last_collective_wall_ns(os.path.join(rec, f"rank-{victim}.db"))
    logged = [t for _, t in steps(job, victim) if t > killed_ns - 1_000_000_000]
    gap_ms = max((b - a for a, b in zip(logged, logged[1:])), default=0) / 1e6
    result["lost_ms"] = None if last is None else (killed_ns - last) / 1e6
    result["bound_ms"] = 2 * FLUSH_MS + gap_ms
    result["ok"] = (result["files_ok"] and result["readable"] and result["merged"] and
                    result["lost_ms"] is not None and result["lost_ms"] <= result["bound_ms"])
    shutil.rmtree(rec, ignore_errors=True)
    shutil.rmtree(job, ignore_errors=True)
    return result


def memory_mib(pid):
    """(all resident, anonymous) memory in MiB: the anonymous part is the heap
    and the injector's rings; the rest includes the pages of the rank file
    SQLite maps, which grow with the file and are the OS's file cache."""
    fields = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key in ("VmRSS", "RssAnon"):
                    fields[key] = int(value.split()[0]) / 1024
    except FileNotFoundError:
        return None
    return (fields["VmRSS"], fields["RssAnon"]) if len(fields) == 2 else None


def slope_per_minute(samples, since=None):
    """Least-squares MiB per minute of (time, MiB) over the second half, or
    over the samples from time `since` on."""
    half = samples[len(samples) // 2:] if since is None else [s for s in samples if s[0] >= since]
    if len(half) < 2:
        return 0.0
    t0 = half[0][0]
    xs = [(t - t0) / 60 for t, _ in half]
    ys = [m for _, m in half]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    den = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / den if den else 0.0


def rank_file_mib(rec):
    """Rank 0's database as its writer sees it (pages in the file and in the
    write-ahead log, each counted once), in MiB; 0 until it can be read."""
    try:
        path = f"file:{os.path.join(rec, 'rank-0.db')}?mode=ro"
        with contextlib.closing(sqlite3.connect(path, uri=True, timeout=0.1)) as db:
            pages = db.execute("PRAGMA page_count").fetchone()[0]
            size = db.execute("PRAGMA page_size").fetchone()[0]
        return pages * size / 2**20
    except sqlite3.Error:
        return 0.0


def memory_run(work, seconds, recorded, cache_full_s=None):
    """Rank 0's memory every second: first, last and MiB per minute over the
    second half, of all resident memory and of its anonymous part; recorded,
    also when the rank file first held CACHE_FULL_MIB (seconds from the start),
    and the anonymous part's slope from then on (for a plain run: from
    `cache_full_s`, the recorded run's moment)."""
    job = os.path.join(work, "job-recorded" if recorded else "job-plain")
    os.makedirs(job)
    inner = [PYTHON, JOB, "--out", job, "--seconds", str(seconds)]
    torchrun = [os.path.join(VENV, "torchrun"), "--nproc_per_node", "2"] + inner[1:]
    env = dict(os.environ, MASTER_ADDR="127.0.0.1")
    if not recorded:
        argv = torchrun
    elif PRELOAD_UNDER_TORCHRUN:  # the injector alone, without record's launcher
        argv = torchrun
        env.update(LD_PRELOAD=INJECT, DDPSCOPE_OUT=os.path.join(work, "memory-run"),
                   DDPSCOPE_FLUSH_MS=str(FLUSH_MS))
    else:
        argv = ([DDPSCOPE, "record", "-o", os.path.join(work, "memory-run"), "--nproc", "2",
                 "--flush-ms", str(FLUSH_MS)] + RECORD_FLAGS + ["--"] + inner)
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    wait_for(lambda: os.path.exists(os.path.join(job, "pid-rank0")), 120)
    pid = pid_of(job, 0)
    rss, anon, start = [], [], time.monotonic()
    while p.poll() is None:
        m = memory_mib(pid)
        t = time.monotonic() - start
        if m is not None:
            rss.append((t, m[0]))
            anon.append((t, m[1]))
        rec = os.path.join(work, "memory-run")
        if recorded and cache_full_s is None and rank_file_mib(rec) >= CACHE_FULL_MIB:
            cache_full_s = t
        time.sleep(1)
    if not rss:
        return None
    after = None if cache_full_s is None else slope_per_minute(anon, since=cache_full_s)
    return {"steps": len(steps(job, 0)), "rss": (rss[0][1], rss[-1][1], slope_per_minute(rss)),
            "anon": (anon[0][1], anon[-1][1], slope_per_minute(anon)),
            "cache_full_s": cache_full_s, "anon_after": after}


def main():
    minutes = float(sys.argv[1]) if len(sys.argv) > 1 else 0
    if minutes <= 0:
        print("usage: bench/soak.sh MINUTES", file=sys.stderr)
        return 2
    work = tempfile.mkdtemp(prefix="ddpscope-soak-")
    random.seed(os.getpid())
    print(f"soak: {minutes:g} min on {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}; "
          f"python {PYTHON}; flush {FLUSH_MS} ms")
    print(f"{'round':>5} {'victim':>6} {'steps':>6} {'exit':>5} {'files':>6} {'reads':>6} "
          f"{'merge':>6} {'lost ms':>8} {'bound ms':>9}  result")
    phases = os.environ.get("SOAK_PHASES", "kill,memory").split(",")
    end = time.monotonic() + (minutes * 30 if "kill" in phases else 0)
    rounds, failed, lost = 0, 0, []
    while time.monotonic() < end:
        rounds += 1
        r = kill_round(work, rounds)
        if "error" in r:
            failed += 1
            print(f"{rounds:>5} {r['error']}")
            continue
        failed += not r["ok"]
        if r["lost_ms"] is not None:
            lost.append(r["lost_ms"])
        yes = lambda b: "yes" if b else "NO"  # noqa: E731
        print(f"{rounds:>5} {r['victim']:>6} {r['steps']:>6} {r['record_exit']:>5} "
              f"{yes(r['files_ok']):>6} {yes(r['readable']):>6} {yes(r['merged']):>6} "
              f"{r['lost_ms'] if r['lost_ms'] is None else round(r['lost_ms'], 1):>8} "
              f"{r['bound_ms']:>9.1f}  {'ok' if r['ok'] else 'FAILED'}", flush=True)
    if lost:
        print(f"kill rounds: {rounds}, failed {failed}; lost before the kill: "
              f"median {sorted(lost)[len(lost) // 2]:.1f} ms, worst {max(lost):.1f} ms")
    if "memory" not in phases:
        shutil.rmtree(work, ignore_errors=True)
        return 1 if failed else 0
    seconds = max(30, int(minutes * 15))
    print(f"\nmemory: rank 0's RSS, {seconds} s recorded, then {seconds} s without ddpscope")
    cache_full_s = None
    for recorded in (True, False):
        m = memory_run(work, seconds, recorded, cache_full_s)
        name = "recorded" if recorded else "plain   "
        if m is None:
            print(f"  {name}  the job did not run")
            failed += 1
            continue
        for kind in ("rss", "anon"):
            first, last, slope = m[kind]
            print(f"  {name}  {m['steps']:>6} steps  {'RSS ' if kind == 'rss' else 'heap'} "
                  f"{first:7.1f} -> {last:7.1f} MiB, second half {slope:+.2f} MiB/min")
        cache_full_s = m["cache_full_s"]
        if cache_full_s is None and recorded:
            print(f"  {name}  the rank file never held {CACHE_FULL_MIB} MiB "
                  "(the page cache still filling)")
        elif m["anon_after"] is not None:
            print(f"  {name}  heap from {cache_full_s:.0f} s on (rank file {CACHE_FULL_MIB} MiB: "
                  f"page cache full) {m['anon_after']:+.2f} MiB/min")
    shutil.rmtree(work, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
