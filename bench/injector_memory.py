"""The injector's own memory over time, without a Python job around it.

The soak (bench/soak.py) measures a recorded DDP job, whose heap also holds
torch's, Python's and the start-up hook's allocations. Here the process is
tests/integration/nccl_workload (the NCCL test double: no allocation of its
own after start-up), preloaded with libddpscope_inject.so, so what grows is
ours. Two jobs, MINUTES/2 each:

  steady  two long-lived rank threads, one all-reduce each every millisecond
          (about 2,000 collectives/s into the rank file);
  churn   a new pair of communicators and two new threads every 2 ms, one
          all-reduce each (threads that come and go: a thread pool, a
          DataLoader's pin-memory thread per epoch, at an extreme rate).

Prints anonymous resident memory (heap and the per-thread rings) once a
minute, the rank file's size, the collectives recorded, the event rings the
process made (meta event_rings), and the growth over the second half of each
run and from when the rank file first held 8 MiB: until then the rank
writer's 4 MiB SQLite page cache is still filling (MiB per minute, least
squares).
  bench/injector_memory.sh MINUTES [steady|churn]   (one job: MINUTES/2 of it)
"""
import contextlib
import os
import sqlite3
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from soak import CACHE_FULL_MIB, memory_mib, rank_file_mib, slope_per_minute  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("DDPSCOPE_BUILD", os.path.join(ROOT, "build"))
WORKLOAD = os.path.join(BUILD, "nccl_workload")
INJECT = os.path.join(BUILD, "libddpscope_inject.so")
JOBS = {"steady": ["steady", "100000000", "1000"], "churn": ["paced", "100000000", "2"]}


def dir_mib(path):
    return sum(os.path.getsize(os.path.join(path, f)) for f in os.listdir(path)) / 2**20


def run(name, seconds, work):
    out = os.path.join(work, name)
    env = dict(os.environ, DDPSCOPE_OUT=out, DDPSCOPE_RANK="0", DDPSCOPE_QUIET="1",
               LD_PRELOAD=INJECT)
    p = subprocess.Popen([WORKLOAD] + JOBS[name], env=env, stdout=subprocess.DEVNULL)
    start, samples, next_print, cache_full_s = time.monotonic(), [], 0.0, None
    while time.monotonic() - start < seconds and p.poll() is None:
        m = memory_mib(p.pid)
        t = time.monotonic() - start
        if m is not None and t >= 5:  # past start-up: the injector has started
            samples.append((t, m[1]))
        if cache_full_s is None and os.path.isdir(out) and rank_file_mib(out) >= CACHE_FULL_MIB:
            cache_full_s = t
        if m is not None and t >= 5 and t >= next_print:
            size = dir_mib(out) if os.path.isdir(out) else 0.0
            print(f"  {name:<6} {t:6.0f} s  heap+rings {m[1]:8.1f} MiB  rank file {size:7.1f} MiB",
                  flush=True)
            next_print += 60
        time.sleep(1)
    p.terminate()  # SIGTERM: the injector flushes, then the job ends of it
    p.wait()
    with contextlib.closing(sqlite3.connect(os.path.join(out, "rank-0.db"))) as db:
        rows = db.execute("SELECT count(*) FROM collectives").fetchone()[0]
        rings = db.execute("SELECT value FROM meta WHERE key = 'event_rings'").fetchone()
    first, last = samples[0][1], samples[-1][1]
    print(f"  {name:<6} {rows} collectives recorded; heap+rings {first:.1f} -> {last:.1f} MiB, "
          f"peak {max(m for _, m in samples):.1f}, second half {slope_per_minute(samples):+.2f} "
          f"MiB/min; {rings[0] if rings else '?'} event rings", flush=True)
    if cache_full_s is not None:  # the writer's page cache full: what grows after is ours
        print(f"  {name:<6} from {cache_full_s:.0f} s on (rank file {CACHE_FULL_MIB} MiB): "
              f"{slope_per_minute(samples, since=cache_full_s):+.2f} MiB/min", flush=True)


def main():
    minutes = float(sys.argv[1]) if len(sys.argv) > 1 else 0
    names = sys.argv[2:] or list(JOBS)
    if minutes <= 0 or any(n not in JOBS for n in names):
        print("usage: bench/injector_memory.sh MINUTES [steady|churn]", file=sys.stderr)
        return 2
    print(f"injector memory: {minutes:g} min on {os.cpu_count()} cores, load "
          f"{os.getloadavg()[0]:.1f}; DDPSCOPE_BUFFER_EVENTS "
          f"{os.environ.get('DDPSCOPE_BUFFER_EVENTS', 'default')}")
    with tempfile.TemporaryDirectory(prefix="ddpscope-injector-memory-") as work:
        for name in names:
            run(name, minutes * 30, work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
