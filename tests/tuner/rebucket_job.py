#!/usr/bin/env python3
"""A small DDP job (CPU, Gloo) whose layers differ in size, so that bucket caps
around 1 MiB give different bucket layouts; test_rebucket_from_record.py
records it and runs it at other caps.

Launched with torchrun's variables (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT),
or alone as one process. Rank 0 writes DDP's own account of its buckets
(_get_ddp_logging_data) to --layout-out as JSON: bucket_sizes (the
constructor's layout) and rebuilt_bucket_sizes (null until DDP rebuilt), in
reduction order, as lists of ints.
"""
import argparse
import gc
import json
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

# Weights of 768, 960, 640, 512, 640 and 160 KiB.
WIDTHS = [512, 384, 640, 256, 512, 320, 128]


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cap", type=float, required=True, help="bucket_cap_mb, passed explicitly")
    p.add_argument("--find-unused", action="store_true", help="find_unused_parameters=True")
    p.add_argument("--iters", type=int, default=4)
    p.add_argument("--layout-out", required=True)
    return p.parse_args()


def sizes(text):
    """DDP's logging writes sizes as "a, b, c"."""
    return [int(x) for x in str(text).replace(",", " ").split()] if text else None


def main():
    args = parse_args()
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29500")
    rank = int(os.environ.get("RANK", "0"))
    world = int(os.environ.get("WORLD_SIZE", "1"))
    dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.manual_seed(0)
    model = nn.Sequential(*[nn.Linear(WIDTHS[i], WIDTHS[i + 1]) for i in range(len(WIDTHS) - 1)])
    ddp = DDP(model, bucket_cap_mb=args.cap, find_unused_parameters=args.find_unused)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
    torch.manual_seed(1 + rank)
    for _ in range(args.iters):
        opt.zero_grad()
        ddp(torch.randn(8, WIDTHS[0])).square().mean().backward()
        opt.step()
    if rank == 0:
        log = ddp._get_ddp_logging_data()
        layout = {"torch_version": torch.__version__,
                  "bucket_sizes": sizes(log.get("bucket_sizes")),
                  "rebuilt_bucket_sizes": sizes(log.get("rebuilt_bucket_sizes")),
                  "rebuilt_per_bucket_param_indices": log.get("rebuilt_per_bucket_param_indices"),
                  "param_bytes": [p.numel() * p.element_size() for p in model.parameters()]}
        with open(args.layout_out, "w") as f:
            json.dump(layout, f)
    # Torn down while the interpreter is fully alive, after a pause without
    # the GIL (examples/ddp_train.py's shutdown): torch 2.15's Gloo worker
    # drops the barrier's work after the barrier returns, and that needs the
    # GIL; at interpreter exit it cannot have it and the rank aborts
    # ("terminate called without an active exception", 3 runs in 40 without
    # any profiler; the core shows ~AsyncBarrierWork -> ~ThreadLocalState ->
    # gil_scoped_acquire -> PyThread_exit_thread on the worker thread).
    dist.barrier()
    time.sleep(0.05)
    del ddp, opt, model
    gc.collect()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
