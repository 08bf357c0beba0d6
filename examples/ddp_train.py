#!/usr/bin/env python3
"""A configurable PyTorch DDP training job, the example ddpscope records.

Launch it with the variables torchrun sets (RANK, WORLD_SIZE, MASTER_ADDR,
MASTER_PORT) -- `ddpscope record --nproc N -- python3 examples/ddp_train.py`
does exactly that. The backend follows the device: gloo on cpu, nccl on cuda.

--ddp-log DIR writes DDP's own account of its buckets
(`_get_ddp_logging_data()`) to DIR/ddp-rank<R>.json, which the tests compare
with what ddpscope recorded. --params-out DIR writes a digest of the trained
parameters to DIR/params-rank<R>.json, which the tests compare across ranks and
with the same job run without ddpscope: a profiler must not perturb training.
"""
import argparse
import gc
import hashlib
import json
import os
import signal
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    p.add_argument("--layers", type=int, default=8, help="hidden layers")
    p.add_argument("--width", type=int, default=256, help="hidden layer width")
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--iters", type=int, default=10, help="training iterations")
    p.add_argument("--bucket-cap-mb", type=float, default=25.0)
    p.add_argument("--ddp-log", metavar="DIR", help="dump DDP's logging data per rank here")
    p.add_argument("--params-out", metavar="DIR",
                   help="write a digest of the trained parameters per rank here")
    p.add_argument("--nvtx", action="store_true", help="mark each step with an NVTX range (cuda)")
    p.add_argument("--sleep-ms", type=float, default=0.0,
                   help="extra compute time per step on this rank (straggler experiments)")
    p.add_argument("--sleep-rank", type=int, default=-1, help="rank that gets --sleep-ms (-1: all)")
    p.add_argument("--stall-rank", type=int, default=-1,
                   help="this rank stops before the backward of iteration --stall-at, for good: "
                   "the others wait in its bucket all-reduces (a hang, for docs/hangs.md)")
    p.add_argument("--die-rank", type=int, default=-1,
                   help="this rank dies (--die-how) before the backward of iteration --stall-at")
    p.add_argument("--die-how", choices=["abort", "segv", "bus", "exit"], default="abort",
                   help="abort: SIGABRT (as std::terminate); segv: a null read; bus: SIGBUS; "
                   "exit: os._exit(3), no clean-up")
    p.add_argument("--die-delay-ms", type=float, default=0.0, help="wait this long, then die")
    p.add_argument("--raise-rank", type=int, default=-1,
                   help="this rank raises an exception before the backward of iteration --stall-at")
    p.add_argument("--mismatch-rank", type=int, default=-1,
                   help="at iteration --stall-at every rank all-reduces a tensor of 4 elements, "
                   "this one of 7 (a desync)")
    p.add_argument("--stall-at", type=int, default=3,
                   help="iteration of --stall-rank, --die-rank, --raise-rank, --mismatch-rank")
    return p.parse_args()


def build_model(args):
    layers = []
    for _ in range(args.layers):
        layers += [nn.Linear(args.width, args.width), nn.ReLU()]
    layers.append(nn.Linear(args.width, 10))
    return nn.Sequential(*layers)


def first_bucket_bytes(ddp_model):
    """The first bucket's cap DDP gave its Reducer. torch 1.13 always used
    dist._DEFAULT_FIRST_BUCKET_BYTES (1 MiB); torch 2.x uses it only when
    bucket_cap_mb is not given, and bucket_cap_mb's own cap otherwise."""
    config = getattr(ddp_model, "_bucket_config", None)  # torch 2.15
    if config is not None:
        return config.first_bucket_bytes_cap
    if getattr(ddp_model, "bucket_bytes_cap_default", True) is False:
        return ddp_model.bucket_bytes_cap
    return dist._DEFAULT_FIRST_BUCKET_BYTES


def logging_data(ddp_model):
    data = ddp_model._get_ddp_logging_data()
    keys = ["bucket_sizes", "rebuilt_bucket_sizes", "prev_iteration_grad_ready_order_indices",
            "avg_backward_comm_time", "avg_backward_compute_comm_overlap_time",
            "avg_backward_compute_time", "bucket_cap_bytes", "world_size", "backend_name",
            "iteration", "comm_hook"]
    out = {}
    for k in keys:
        v = data.get(k)
        if isinstance(v, str) and k.endswith("sizes"):
            v = [int(x) for x in v.split(",") if x.strip()]
        out[k] = v
    out["first_bucket_bytes"] = first_bucket_bytes(ddp_model)
    out["backend_class"] = backend_class(ddp_model)
    return out


def backend_class(ddp_model):
    """The class of the backend torch built for the model's device: torch 2.15
    builds ProcessGroupNCCL2 (torchcomms) for "nccl" unless TORCH_DIST_USE_NCCL2=0,
    older ones ProcessGroupNCCL; 1.13 has one process group object per backend."""
    group = dist.distributed_c10d._get_default_group()
    device = next(ddp_model.parameters()).device
    try:
        return type(group._get_backend(device)).__name__
    except (AttributeError, RuntimeError):
        return type(group).__name__


def params_digest(model):
    """sha256 over every parameter's name and bytes in module order, plus the
    first values of each for a readable diff when two digests differ."""
    digest = hashlib.sha256()
    head = {}
    for name, p in model.named_parameters():
        values = p.detach().to("cpu").contiguous()
        digest.update(name.encode())
        digest.update(values.numpy().tobytes())
        head[name] = [float(v) for v in values.flatten()[:4]]
    return {"sha256": digest.hexdigest(), "head": head}


def main():
    args = parse_args()
    backend = "nccl" if args.device == "cuda" else "gloo"
    dist.init_process_group(backend=backend)
    rank, world = dist.get_rank(), dist.get_world_size()
    if args.device == "cuda":
        # Ranks beyond the GPUs share them (LOCAL_RANK % device count): several
        # NCCL ranks on one GPU, each its own NCCL_HOSTID (scripts/onegpu_rank.sh).
        local = int(os.environ.get("LOCAL_RANK", "0")) % torch.cuda.device_count()
        torch.cuda.set_device(local)
        device = torch.device("cuda", local)
    else:
        device = torch.device("cpu")

    torch.manual_seed(1234)
    model = build_model(args).to(device)
    ddp = DDP(model, device_ids=[device.index] if device.type == "cuda" else None,
              bucket_cap_mb=args.bucket_cap_mb)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
    loss_fn = nn.CrossEntropyLoss()
    gen = torch.Generator().manual_seed(rank)

    start = time.perf_counter()
    step_ms = []
    for it in range(args.iters):
        t0 = time.perf_counter()
        if args.nvtx and args.device == "cuda":
            torch.cuda.nvtx.range_push(f"step {it}")
        x = torch.randn(args.batch, args.width, generator=gen).to(device)
        y = torch.randint(0, 10, (args.batch,), generator=gen).to(device)
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(ddp(x), y)
        if it == args.stall_at and rank == args.stall_rank:
            stall()
        if it == args.stall_at and rank == args.die_rank:
            die(args.die_how, args.die_delay_ms)
        if it == args.stall_at and rank == args.raise_rank:
            raise RuntimeError(f"rank {rank}: a bad batch at iteration {it}")
        if it == args.stall_at and args.mismatch_rank >= 0:
            dist.all_reduce(torch.ones(7 if rank == args.mismatch_rank else 4, device=device))
        loss.backward()
        if args.sleep_ms > 0 and args.sleep_rank in (-1, rank):
            time.sleep(args.sleep_ms / 1000.0)
        opt.step()
        if args.device == "cuda":
            torch.cuda.synchronize()
        if args.nvtx and args.device == "cuda":
            torch.cuda.nvtx.range_pop()
        step_ms.append((time.perf_counter() - t0) * 1000.0)
    elapsed = time.perf_counter() - start

    # A final loss all-reduce so every rank prints the same, reproducible number.
    final = loss.detach().clone()
    dist.all_reduce(final)
    final = final.item() / world
    if rank == 0:
        params = sum(p.numel() for p in model.parameters())
        print(f"trained {args.iters} iterations on {world} rank(s), {params} parameters, "
              f"backend {backend}, mean loss {final:.6f}")
        sys.stdout.flush()
    if args.ddp_log:
        os.makedirs(args.ddp_log, exist_ok=True)
        record = logging_data(ddp)
        record.update({"rank": rank, "iters": args.iters, "elapsed_s": elapsed,
                       "step_ms": step_ms})
        with open(os.path.join(args.ddp_log, f"ddp-rank{rank}.json"), "w") as f:
            json.dump(record, f, indent=1)
    if args.params_out:
        os.makedirs(args.params_out, exist_ok=True)
        with open(os.path.join(args.params_out, f"params-rank{rank}.json"), "w") as f:
            json.dump(dict(params_digest(model), rank=rank), f, indent=1)
    del model, opt
    shutdown(ddp)


def die(how, delay_ms):
    """A rank that dies, each of the ways a process can (docs/hangs.md)."""
    time.sleep(delay_ms / 1000.0)
    if how == "abort":
        os.abort()
    elif how == "segv":
        import ctypes
        ctypes.string_at(0)
    elif how == "bus":
        os.kill(os.getpid(), signal.SIGBUS)
    os._exit(3)


def stall():
    """A rank stuck for good (a dead data loader, say), as a user would see it."""
    print(f"rank {dist.get_rank()}: stalling before backward", flush=True)
    while True:
        time.sleep(1)


def shutdown(ddp):
    """Tear DDP down while the interpreter is fully alive.

    Debian's torch 1.13 can deadlock at interpreter exit when DDP's Reducer
    destroys the Gloo process group while a Gloo worker thread still waits for
    the GIL to drop its last Python reference (seen without any profiler). A
    barrier, a GIL-free pause for the workers to go idle, and an explicit
    teardown avoid it.
    """
    dist.barrier()
    time.sleep(0.05)
    del ddp
    gc.collect()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
