#!/usr/bin/env python3
"""A configurable PyTorch FSDP2 (fully_shard) training job, the example
ddpscope records for fully sharded data parallelism.

Launch it with the variables torchrun sets (RANK, WORLD_SIZE, MASTER_ADDR,
MASTER_PORT) -- `ddpscope record --nproc N -- python3 examples/fsdp_train.py`
does exactly that. The backend follows the device: gloo on cpu, nccl on cuda.

The model is --blocks blocks (Linear, ReLU, Linear), each wrapped by
fully_shard, then the root (which holds the head). Options add what users
combine with it: mixed precision, no reshard after forward, explicit
prefetching, HSDP (a replicate x shard mesh), a DDP-wrapped module beside
the sharded one, a second sharded model (a second root), and activation
checkpointing and torch.compile per block, applied before fully_shard as
torchtitan does; --stall-rank makes a hang.

--fsdp-log DIR writes FSDP's own account of each unit (its module's name, its
padded sharded and unsharded sizes, the all-gather and reduce dtypes) to
DIR/fsdp-rank<R>.json, which the tests compare with what ddpscope recorded,
and each step's time (step_ms), which bench/ddp_slowdown.sh --fsdp compares.
--params-out DIR writes a digest of the trained parameters to
DIR/params-rank<R>.json: a profiler must not perturb training.
"""
import argparse
import hashlib
import json
import os
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn

try:  # torch >= 2.6. Debian's 1.13 has no FSDP2, and its FSDP1 fails to import on Python 3.11
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
except (ImportError, ValueError):
    fully_shard = None


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    p.add_argument("--blocks", type=int, default=4, help="fully_shard units below the root")
    p.add_argument("--width", type=int, default=256)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--iters", type=int, default=10, help="training steps")
    p.add_argument("--mixed-precision", action="store_true",
                   help="all-gather in bfloat16, reduce in float32")
    p.add_argument("--no-reshard-after-forward", action="store_true")
    p.add_argument("--prefetch", type=int, default=0,
                   help="each block prefetches the next N blocks' all-gathers explicitly, "
                   "forward and backward")
    p.add_argument("--hsdp", action="store_true",
                   help="a (replicate, shard) mesh of (2, world/2): HSDP")
    p.add_argument("--accumulate", type=int, default=1,
                   help="micro-batches per step: all but the last without gradient sync or "
                   "resharding after backward (set_requires_gradient_sync(False))")
    p.add_argument("--huge-block", type=int, default=-1,
                   help="this block's hidden layer is 8 times as wide: the unit to wait for")
    p.add_argument("--second-root", type=int, default=0, metavar="N",
                   help="a second sharded model trained in the same step: N blocks in an "
                   "nn.Sequential, a root with no parameters of its own")
    p.add_argument("--ddp-head", action="store_true",
                   help="a second model, a DDP-wrapped head, trained in the same step")
    p.add_argument("--checkpoint", action="store_true",
                   help="activation checkpointing per block (checkpoint_wrapper): backward "
                   "runs each block's forward again")
    p.add_argument("--compile", nargs="?", const="inductor", metavar="BACKEND",
                   help="torch.compile each block (default backend: inductor)")
    p.add_argument("--stall-rank", type=int, default=-1,
                   help="this rank stops for good after block --stall-block's forward in step "
                   "--stall-at: the others wait in the next unit's all-gather (a hang)")
    p.add_argument("--stall-at", type=int, default=3, help="the step of --stall-rank (0: first)")
    p.add_argument("--stall-block", type=int, default=1, help="the block of --stall-rank")
    p.add_argument("--fsdp-log", metavar="DIR", help="dump FSDP's own account per rank here")
    p.add_argument("--params-out", metavar="DIR",
                   help="write a digest of the trained parameters per rank here")
    return p.parse_args()


class Block(nn.Module):
    def __init__(self, width, hidden):
        super().__init__()
        self.up = nn.Linear(width, hidden)
        self.down = nn.Linear(hidden, width)

    def forward(self, x):
        return x + self.down(torch.relu(self.up(x)))


class Model(nn.Module):
    def __init__(self, blocks, width, huge=-1):
        super().__init__()
        self.blocks = nn.ModuleList(Block(width, width * (8 if i == huge else 1))
                                    for i in range(blocks))
        self.head = nn.Linear(width, 10)
        self.stall_after = -1  # --stall-rank: the block after whose forward this rank stops

    def forward(self, x):
        for i, block in enumerate(self.blocks):
            x = block(x)
            if i == self.stall_after:
                stall()
        return self.head(x)


def stall():
    """A rank stuck for good (a dead data loader, say), as a user would see it."""
    print(f"rank {dist.get_rank()}: stalling in forward", flush=True)
    while True:
        time.sleep(1)


def shard(model, args, device):
    kwargs = {}
    if args.hsdp:
        from torch.distributed.device_mesh import init_device_mesh

        world = dist.get_world_size()
        kwargs["mesh"] = init_device_mesh(device.type, (2, world // 2),
                                          mesh_dim_names=("replicate", "shard"))
    if args.mixed_precision:
        kwargs["mp_policy"] = MixedPrecisionPolicy(param_dtype=torch.bfloat16,
                                                   reduce_dtype=torch.float32)
    if args.no_reshard_after_forward:
        kwargs["reshard_after_forward"] = False
    if args.checkpoint:
        from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import (
            checkpoint_wrapper)

        for i, block in enumerate(model.blocks):
            model.blocks[i] = checkpoint_wrapper(block)
    if args.compile:
        for block in model.blocks:
            block.compile(backend=args.compile)
    for block in model.blocks:
        fully_shard(block, **kwargs)
    fully_shard(model, **kwargs)
    if args.prefetch > 0:
        blocks = list(model.blocks)
        for i, block in enumerate(blocks):
            block.set_modules_to_forward_prefetch(blocks[i + 1:i + 1 + args.prefetch])
            if i > 0:
                block.set_modules_to_backward_prefetch(blocks[max(0, i - args.prefetch):i][::-1])


def fsdp_account(model):
    """FSDP's own account of each unit: the module's name in the root, its
    parameters, padded sizes in elements, and the collectives' dtypes."""
    units = []
    for name, module in model.named_modules():
        state = module._get_fsdp_state() if hasattr(module, "_get_fsdp_state") else None
        group = getattr(state, "_fsdp_param_group", None) if state is not None else None
        if group is None:
            continue
        params = group.fsdp_params
        units.append({
            "fqn": name,
            "params": len(params),
            "padded_sharded_numel": sum(p.padded_sharded_param_size.numel() for p in params),
            "padded_unsharded_numel": sum(p.padded_sharded_param_size.numel() for p in params)
            * group.mesh_info.shard_mesh_size,
            "all_gather_dtype": str(params[0].param_dtype or params[0].orig_dtype).replace("torch.", ""),
            "reduce_dtype": str(params[0].reduce_dtype or params[0].orig_dtype).replace("torch.", ""),
        })
    return units


def params_digest(model):
    """sha256 over every parameter's name and local shard, in module order."""
    digest = hashlib.sha256()
    for name, p in model.named_parameters():
        local = p.to_local() if hasattr(p, "to_local") else p
        digest.update(name.encode())
        digest.update(local.detach().to("cpu").float().contiguous().numpy().tobytes())
    return digest.hexdigest()


def main():
    args = parse_args()
    if fully_shard is None:
        print(f"torch {torch.__version__} has no FSDP2 (torch.distributed.fsdp.fully_shard)",
              file=sys.stderr)
        return 3
    backend = "nccl" if args.device == "cuda" else "gloo"
    dist.init_process_group(backend=backend)
    rank, world = dist.get_rank(), dist.get_world_size()
    if args.device == "cuda":
        local = int(os.environ.get("LOCAL_RANK", "0")) % torch.cuda.device_count()
        torch.cuda.set_device(local)
        device = torch.device("cuda", local)
    else:
        device = torch.device("cpu")

    torch.manual_seed(1234)
    model = Model(args.blocks, args.width, args.huge_block).to(device)
    shard(model, args, device)
    params = list(model.parameters())
    second = None
    if args.second_root > 0:
        second = nn.Sequential(*[Block(args.width, args.width)
                                 for _ in range(args.second_root)]).to(device)
        for block in second:
            fully_shard(block)
        fully_shard(second)
        params += list(second.parameters())
    head = None
    if args.ddp_head:
        from torch.nn.parallel import DistributedDataParallel as DDP

        head = DDP(nn.Linear(10, 10).to(device))
        params += list(head.parameters())
    opt = torch.optim.SGD(params, lr=0.01)
    loss_fn = nn.CrossEntropyLoss()
    gen = torch.Generator().manual_seed(rank)
    step_ms = []
    for step in range(args.iters):
        if step == args.stall_at and rank == args.stall_rank:
            model.stall_after = args.stall_block
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        for micro in range(args.accumulate):
            last = micro == args.accumulate - 1
            if args.accumulate > 1:
                model.set_requires_gradient_sync(last)
                model.set_reshard_after_backward(last)
            x = torch.randn(args.batch, args.width, generator=gen).to(device)
            y = torch.randint(0, 10, (args.batch,), generator=gen).to(device)
            out = model(x) if second is None else model(x + second(x))
            if head is not None:
                out = head(out)
            loss_fn(out.float(), y).backward()
        opt.step()
        if args.device == "cuda":
            torch.cuda.synchronize()
        step_ms.append((time.perf_counter() - t0) * 1000.0)
    if rank == 0:
        print(f"trained {args.iters} steps on {world} rank(s), {args.blocks} fully_shard blocks, "
              f"backend {backend}")
        sys.stdout.flush()
    if args.fsdp_log:
        os.makedirs(args.fsdp_log, exist_ok=True)
        with open(os.path.join(args.fsdp_log, f"fsdp-rank{rank}.json"), "w") as f:
            json.dump({"rank": rank, "world": world, "units": fsdp_account(model),
                       "step_ms": step_ms}, f, indent=1)
    if args.params_out:
        os.makedirs(args.params_out, exist_ok=True)
        with open(os.path.join(args.params_out, f"params-rank{rank}.json"), "w") as f:
            json.dump({"rank": rank, "sha256": params_digest(model)}, f, indent=1)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
