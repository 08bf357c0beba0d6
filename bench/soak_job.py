#!/usr/bin/env python3
"""The DDP job bench/soak.sh records over and over: everything a real job
does that can trip an injector, on CPU with Gloo.

- DataLoader workers that fork (a new worker pool every epoch);
- a background thread doing tensor math while the main thread trains;
- a signal (SIGUSR1) sent to itself every 50 ms, handled in Python, so that
  system calls are interrupted at random points;
- loss.item() every step (a host sync), optimizer steps, DDP buckets.

It writes its pid to OUT/pid-rank<R> and, after every step, one line
"step wall_ns" to OUT/steps-rank<R> (flushed: the soak compares the steps a
rank finished before it was killed with what its rank file holds), and runs
until --seconds have passed or it is killed.
"""
import argparse
import os
import signal
import threading
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset


class Noise(Dataset):
    def __init__(self, n, width):
        self.n, self.width = n, width

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        return torch.randn(self.width, generator=g), torch.randint(0, 10, (1,), generator=g)[0]


def background_math(stop):
    a = torch.randn(64, 64)
    while not stop.is_set():
        a = torch.tanh(a @ a.T / 64)
        time.sleep(0.005)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--seconds", type=float, default=60)
    p.add_argument("--width", type=int, default=256)
    p.add_argument("--workers", type=int, default=2)
    args = p.parse_args()
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    with open(os.path.join(args.out, f"pid-rank{rank}"), "w") as f:
        f.write(str(os.getpid()))
    model = DDP(nn.Sequential(nn.Linear(args.width, args.width), nn.ReLU(),
                              nn.Linear(args.width, args.width), nn.ReLU(),
                              nn.Linear(args.width, 10)), bucket_cap_mb=0.1)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    signals = [0]
    signal.signal(signal.SIGUSR1, lambda *_: signals.__setitem__(0, signals[0] + 1))
    signal.setitimer(signal.ITIMER_REAL, 0.05, 0.05)
    signal.signal(signal.SIGALRM, lambda *_: os.kill(os.getpid(), signal.SIGUSR1))
    stop = threading.Event()
    # Joined before exit: a daemon thread still inside torch when Python
    # finalizes is ended by pthread_exit, whose unwinding through torch's
    # noexcept deallocators calls std::terminate (2 runs in 8 here, exit 134:
    # the core shows PyThread_exit_thread in take_gil during Py_FinalizeEx).
    math = threading.Thread(target=background_math, args=(stop,))
    math.start()
    steps = open(os.path.join(args.out, f"steps-rank{rank}"), "w", buffering=1)
    end = time.monotonic() + args.seconds
    step = 0
    done = torch.tensor([0.0])
    while not done.item():
        data = DataLoader(Noise(256, args.width), batch_size=32, num_workers=args.workers)
        for x, y in data:  # a new pool of forked workers every epoch
            loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            loss.item()
            steps.write(f"{step} {time.time_ns()}\n")
            step += 1
            if step % 20 == 0:  # the ranks agree on when to stop (as early stopping does)
                done = torch.tensor([float(time.monotonic() >= end)])
                dist.all_reduce(done, op=dist.ReduceOp.MAX)
                if done.item():
                    break
    stop.set()
    math.join()
    signal.setitimer(signal.ITIMER_REAL, 0)
    dist.destroy_process_group()
    print(f"rank {rank}: {step} steps, {signals[0]} signals handled")


if __name__ == "__main__":
    main()
