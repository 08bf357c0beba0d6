#!/usr/bin/env python3
"""The NCCL calls scripts/gpu_check.py records beside the DDP job, on one GPU.

A communicator of one rank runs no ring: NCCL (2.19+) answers an in-place SUM
all-reduce or a broadcast with nothing at all, an out-of-place call with one
device-to-device copy, and an AVG all-reduce with its `oneRankReduce` kernel.
This job issues each kind ITERS times, so the check can tell which of our
timings come from real GPU activity. Writes what it issued to --log as JSON.
"""
import argparse
import json
import os

import torch
import torch.distributed as dist


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--iters", type=int, default=8)
    p.add_argument("--elements", type=int, default=1 << 20)
    p.add_argument("--log", required=True)
    args = p.parse_args()
    dist.init_process_group(backend="nccl")
    torch.cuda.set_device(0)
    x = torch.randn(args.elements, device="cuda")
    out = torch.empty(args.elements * dist.get_world_size(), device="cuda")
    issued = []
    for _ in range(args.iters):
        dist.all_reduce(x, op=dist.ReduceOp.AVG)  # oneRankReduce kernel
        issued.append(["allreduce", "avg", x.numel() * 4])
        dist.all_gather_into_tensor(out, x)  # a device-to-device copy
        issued.append(["allgather", "none", out.numel() * 4])
        dist.all_reduce(x, op=dist.ReduceOp.SUM)  # in place: nothing runs
        issued.append(["allreduce", "sum", x.numel() * 4])
    torch.cuda.synchronize()
    with open(args.log, "w") as f:
        json.dump({"issued": issued, "nccl": ".".join(map(str, torch.cuda.nccl.version()))}, f)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
