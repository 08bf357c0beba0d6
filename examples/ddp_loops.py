#!/usr/bin/env python3
"""Ordinary DDP training loops, each with DDP's own account of itself as ground truth.

Launch it with the variables torchrun sets (RANK, WORLD_SIZE, MASTER_ADDR,
MASTER_PORT) -- `ddpscope record --nproc 3 -- python3 examples/ddp_loops.py
--loop NAME --truth-dir DIR` does exactly that. Gloo on the CPU; with
--device cuda, NCCL with one GPU per rank (LOCAL_RANK % device count).

Each --loop is a training loop as a user writes it (see LOOPS below). After
the last step every rank writes DIR/truth-<rank>.json: what the loop itself
counted (optimizer steps, forward passes) and what each DDP instance says of
itself (`_get_ddp_logging_data()`: bucket sizes before and after DDP rebuilt
its buckets, cap, flags, comm hook), which the tests compare with the report.
Nothing in it is inferred from the communication:

  optimizer_steps, micro_batches   the primary (first) model's step() calls and forwards
  expected_shadow_steps            join_uneven: steps DDP's join hook shadowed here, else 0
  user_collectives                 {calls, bytes} of the loop's own torch.distributed calls
  instances[]                      per DDP instance in creation order: bucket_sizes,
                                   rebuilt_bucket_sizes ([] if DDP never rebuilt),
                                   bucket_cap_bytes, flags, comm_hook (null: none),
                                   num_parameter_tensors, sync_backwards (backwards after
                                   a synchronising forward, counted by the loop)

On torch 1.x the compile loop writes only {"skipped": reason} and exits 0.
--params-out DIR writes a digest of the trained parameters per rank (as
examples/ddp_train.py does), so that a test can check the job computes the same
bits with and without ddpscope.
"""
import argparse
import contextlib
import gc
import hashlib
import json
import os
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

# The first bucket's cap on rebuild, per torch version: the same rule as the
# example job's (this folder is first on sys.path when a script runs).
from ddp_train import first_bucket_bytes  # noqa: E402

# Layer widths of the model most loops train (input 128, 10 classes): five
# buckets at the default 0.25 MB cap on torch 2.x, and still three on torch
# 1.13, whose rebuilt first bucket takes at least 1 MiB whatever the cap
# (dist._DEFAULT_FIRST_BUCKET_BYTES): hence ~1.4 MB of parameters, not less.
WIDTHS = [128, 128, 512, 192, 448, 192, 10]
# loop_compile's model: four buckets at its 1 MiB cap.
COMPILE_WIDTHS = [128, 512, 512, 512, 448, 192, 10]
BATCH = 16
LR = 0.05


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--loop", required=True, choices=sorted(LOOPS))
    p.add_argument("--truth-dir", required=True, metavar="DIR",
                   help="write DDP's and the loop's own account per rank here")
    p.add_argument("--steps", type=int, default=6,
                   help="optimizer steps (join_uneven: fixed 4, 6, 8, ... per rank)")
    p.add_argument("--bucket-cap-mb", type=float, default=0.25)
    p.add_argument("--params-out", metavar="DIR",
                   help="write a digest of the trained parameters per rank here")
    p.add_argument("--device", choices=["cpu", "cuda"], default="cpu",
                   help="cpu: Gloo; cuda: NCCL, models and batches on the rank's GPU")
    return p.parse_args()


class Net(nn.Module):
    """An MLP; with `aux`, one more square layer that forward(use_aux=False) skips."""

    def __init__(self, widths=WIDTHS, aux=False):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(widths, widths[1:]))
        # After the third layer (width widths[3]).
        self.aux = nn.Linear(widths[3], widths[3]) if aux else None

    def forward(self, x, use_aux=False):
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i < len(self.layers) - 1:
                x = torch.relu(x)
            if i == 2 and use_aux:
                x = x + torch.relu(self.aux(x))
        return x


class Loop:
    """One rank's training: its data, its counts, its DDP instances."""

    def __init__(self, args, rank, world, device):
        self.args, self.rank, self.world, self.device = args, rank, world, device
        self.gen = torch.Generator().manual_seed(1000 + rank)
        self.loss_fn = nn.CrossEntropyLoss()
        self.instances = []  # DDP instances in creation order
        self.models = {}     # name -> module whose parameters are digested
        self.optimizer_steps = 0  # of the primary (first) model
        self.micro_batches = 0    # forward passes of the primary model
        self.sync_backwards = []  # per instance: backwards after a synchronising forward
        self.user_calls = 0       # the loop's own torch.distributed calls
        self.user_bytes = 0
        self.expected_shadow_steps = 0
        self.extra = {}

    def ddp(self, module, name, bucket_cap_mb=None, **kwargs):
        cap = self.args.bucket_cap_mb if bucket_cap_mb is None else bucket_cap_mb
        module.to(self.device)
        if self.device.type == "cuda":
            kwargs["device_ids"] = [self.device]
        model = DDP(module, bucket_cap_mb=cap, **kwargs)
        self.instances.append(model)
        self.sync_backwards.append(0)
        self.models[name] = module
        return model

    def batch(self, width=WIDTHS[0]):
        x = torch.randn(BATCH, width, generator=self.gen)
        y = torch.randint(0, WIDTHS[-1], (BATCH,), generator=self.gen)
        return self.on_device(x, y)

    def on_device(self, *tensors):
        """Data drawn on the CPU (one generator, the same numbers on any device)."""
        return [x.to(self.device) for x in tensors]

    def sgd(self, model):
        return torch.optim.SGD(model.parameters(), lr=LR, momentum=0.9)

    def forward_backward(self, model, scale=1.0, sync=True, **kwargs):
        """One micro-batch of the primary model (instance 0); sync=False inside no_sync()."""
        x, y = self.batch()
        loss = self.loss_fn(model(x, **kwargs), y) * scale
        loss.backward()
        self.micro_batches += 1
        self.sync_backwards[0] += int(sync)
        return loss

    def user_all_reduce(self, tensor):
        dist.all_reduce(tensor)
        self.user_calls += 1
        self.user_bytes += tensor.numel() * tensor.element_size()

    def user_barrier(self):
        dist.barrier()
        self.user_calls += 1
        # NCCL has no barrier: torch's ProcessGroupNCCL all-reduces one float
        # (4 bytes) in its place, which goes over the wire like any other.
        # Gloo's barrier moves no tensor.
        if dist.get_backend() == "nccl":
            self.user_bytes += 4


# --- the loops ----------------------------------------------------------------


def loop_loss_logging(t):
    """Average the loss over the ranks after each step, for logging."""
    model = t.ddp(Net(), "model")
    opt = t.sgd(model)
    for _ in range(t.args.steps):
        opt.zero_grad()
        loss = t.forward_backward(model)
        opt.step()
        t.optimizer_steps += 1
        logged = loss.detach().clone()
        t.user_all_reduce(logged)
        logged /= t.world
        if t.rank == 0:
            print(f"step {t.optimizer_steps}: loss {logged.item():.6f}")


def loop_find_unused(t):
    """A data-dependent branch skips `aux`: on every rank in every third step
    (unused everywhere: DDP leaves its gradients alone), and in the other steps
    in one of the two micro-batches, which one depending on the rank. Two
    micro-batches per step, the first under no_sync()."""
    model = t.ddp(Net(aux=True), "model", find_unused_parameters=True)
    opt = t.sgd(model)
    for step in range(t.args.steps):
        opt.zero_grad()
        for micro in range(2):
            use_aux = step % 3 != 2 and (step + micro + t.rank) % 2 == 0
            with model.no_sync() if micro == 0 else contextlib.nullcontext():
                t.forward_backward(model, scale=0.5, sync=micro == 1, use_aux=use_aux)
        opt.step()
        t.optimizer_steps += 1


def join_steps(rank):
    """join_uneven: rank r has data for 4 + 2r optimizer steps (4, 6, 8)."""
    return 4 + 2 * rank


def loop_join_uneven(t):
    """Uneven inputs under model.join(), two micro-batches per step, the first
    under no_sync()."""
    micro = 2
    model = t.ddp(Net(), "model")
    opt = t.sgd(model)
    with model.join():
        for _ in range(join_steps(t.rank)):
            opt.zero_grad()
            for m in range(micro):
                with model.no_sync() if m < micro - 1 else contextlib.nullcontext():
                    t.forward_backward(model, scale=1.0 / micro, sync=m == micro - 1)
            opt.step()
            t.optimizer_steps += 1
    # How often DDP's join hook shadowed the others on this rank, from the
    # known per-rank counts. While ranks have not joined, every DDP forward
    # of theirs (no_sync() ones included) all-reduces a "not joined" flag,
    # which each joined rank matches by one turn of Join.__exit__'s loop: one
    # _DDPJoinHook.main_hook call. The ranks that have not joined run their
    # forwards in lockstep, so a rank that ran F_r forwards shadows
    # max(F) - F_r of them. The main hook shadows the gradient all-reduces
    # (one per bucket) only when the others' forward was a synchronising one
    # (outside no_sync(), told by a second flag all-reduce); every step ends
    # in exactly one such forward, so of those calls max(S) - S_r shadow a
    # whole synchronising step (S: optimizer steps), and the rest only the
    # flags of a no_sync() micro-batch. On 3 ranks: calls 8, 4, 0; shadowed
    # steps 4, 2, 0. Checked once by counting main_hook calls with and
    # without gradient sync in an instrumented copy of torch's hook.
    all_steps = [join_steps(r) for r in range(t.world)]
    t.expected_shadow_steps = max(all_steps) - all_steps[t.rank]
    t.extra["join_main_hook_calls"] = micro * (max(all_steps) - all_steps[t.rank])


def loop_no_sync_accum(t):
    """Gradient accumulation: four micro-batches per step, no_sync() on the first three."""
    micro = 4
    model = t.ddp(Net(), "model")
    opt = t.sgd(model)
    for _ in range(t.args.steps):
        opt.zero_grad()
        for m in range(micro):
            with model.no_sync() if m < micro - 1 else contextlib.nullcontext():
                t.forward_backward(model, scale=1.0 / micro, sync=m == micro - 1)
        opt.step()
        t.optimizer_steps += 1


def plain_loop(t, model):
    opt = t.sgd(model)
    for _ in range(t.args.steps):
        opt.zero_grad()
        t.forward_backward(model)
        opt.step()
        t.optimizer_steps += 1


def loop_static_graph(t):
    plain_loop(t, t.ddp(Net(), "model", static_graph=True))


def loop_grad_as_bucket_view(t):
    plain_loop(t, t.ddp(Net(), "model", gradient_as_bucket_view=True))


def loop_fp16_hook(t):
    """Gradients all-reduced in float16 (half the bucket's bytes), then cast back."""
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
    model = t.ddp(Net(), "model")
    model.register_comm_hook(None, default_hooks.fp16_compress_hook)
    plain_loop(t, model)


def loop_frozen_params(t):
    """Fine-tuning: the first two layers are frozen before DDP wraps the model,
    so the reducer holds only the others."""
    net = Net()
    for layer in net.layers[:2]:
        layer.requires_grad_(False)
    model = t.ddp(net, "model")
    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=LR,
                          momentum=0.9)
    for _ in range(t.args.steps):
        opt.zero_grad()
        t.forward_backward(model)
        opt.step()
        t.optimizer_steps += 1


def loop_two_models(t):
    """A GAN: generator and discriminator, each its own DDP on the default
    process group, each its own optimizer; per iteration a D step then a G step.

    The D step sees real and generated samples in one forward (two forwards
    of one DDP model before its backward are not something DDP promises to
    handle) and the generated ones detached, so its backward stays in D. The G
    step runs D's forward again, outside no_sync(): its backward goes through D
    into G, so D's reducer, which prepared for that backward, gets every
    gradient and all-reduces them (wasted work the D step's zero_grad()
    throws away, but the pattern most GAN code has, and it leaves D's reducer
    finished; no find_unused_parameters needed). So per iteration D
    synchronises twice, G once. Every rank's autograd runs the same graph in the
    same order on the CPU, so the G step's buckets of D and of G are issued in
    the same order everywhere. The generator's BatchNorm makes G broadcast its
    buffers at every forward after the first (broadcast_buffers=True).
    """
    zdim, data = 64, WIDTHS[0]
    gen_net = nn.Sequential(nn.Linear(zdim, 256), nn.BatchNorm1d(256), nn.ReLU(),
                            nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                            nn.Linear(512, data))
    disc_net = nn.Sequential(nn.Linear(data, 512), nn.LeakyReLU(0.2), nn.Linear(512, 384),
                             nn.LeakyReLU(0.2), nn.Linear(384, 1))
    g = t.ddp(gen_net, "generator")      # the primary model: created first
    d = t.ddp(disc_net, "discriminator")
    g_opt, d_opt = t.sgd(g), t.sgd(d)
    bce = nn.BCEWithLogitsLoss()
    for _ in range(t.args.steps):
        real, z = t.on_device(torch.randn(BATCH, data, generator=t.gen) * 0.5 + 1.0,
                              torch.randn(BATCH, zdim, generator=t.gen))
        fake = g(z)
        t.micro_batches += 1
        t.sync_backwards[0] += 1  # G's forward syncs; its backward is the G step's
        # D step
        d_opt.zero_grad()
        logits = d(torch.cat([real, fake.detach()]))
        labels, ones = t.on_device(torch.cat([torch.ones(BATCH, 1), torch.zeros(BATCH, 1)]),
                                   torch.ones(BATCH, 1))
        bce(logits, labels).backward()
        t.sync_backwards[1] += 1
        d_opt.step()
        # G step
        g_opt.zero_grad()
        bce(d(fake), ones).backward()
        t.sync_backwards[1] += 1
        g_opt.step()
        t.optimizer_steps += 1


def loop_compile(t):
    """torch.compile of the DDP model. Dynamo's DDPOptimizer splits the graph at
    DDP's bucket boundaries so that each bucket's all-reduce can start while
    the rest of backward runs; the reducer itself is DDP's as in eager mode.

    Backend aot_eager, not inductor: inductor compiles C++ kernels with g++,
    and three ranks doing that at once on this 2-core machine spent 53 s in
    training (69 s in all) against ~10 s with aot_eager, far over the test
    budget. aot_eager goes through the same Dynamo capture, DDPOptimizer split
    and AOT autograd (the same graphs and backward hooks as far as DDP is
    concerned), only without generating code.
    """
    # DDPOptimizer (torch 2.15) asserts that its first bucket, 1 MiB
    # (dist._DEFAULT_FIRST_BUCKET_BYTES), is no larger than DDP's cap: below a
    # 1 MiB cap the first compiled forward fails ("First bucket should be
    # smaller/equal to other buckets"). Hence a cap of at least 1 MiB here (at
    # exactly 1 MiB, DDPOptimizer's first bucket is DDP's own: torch 2.x caps
    # DDP's first bucket by an explicit bucket_cap_mb), and wider layers
    # (~3.6 MB) for four buckets at it.
    cap = max(t.args.bucket_cap_mb, 1.0)
    model = t.ddp(Net(COMPILE_WIDTHS), "model", bucket_cap_mb=cap)
    compiled = torch.compile(model, backend="aot_eager")
    plain_loop(t, compiled)


LOOPS = {name[len("loop_"):]: fn for name, fn in globals().items() if name.startswith("loop_")}


# --- ground truth ---------------------------------------------------------------


def sizes(value):
    """A logging-data size list: '33280, 33280' (torch 2.x), '33280 33280', a
    list, or absent/empty -> [ints]."""
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return [int(v) for v in value]
    return [int(v) for v in str(value).replace(",", " ").split()]


def instance_truth(ddp_model):
    data = ddp_model._get_ddp_logging_data()
    hook = data.get("comm_hook")
    return {
        "module": data.get("module_name"),
        "bucket_sizes": sizes(data.get("bucket_sizes")),
        "rebuilt_bucket_sizes": sizes(data.get("rebuilt_bucket_sizes")),
        "bucket_cap_bytes": int(data["bucket_cap_bytes"]),
        "first_bucket_bytes": int(first_bucket_bytes(ddp_model)),
        "find_unused_parameters": bool(data.get("find_unused_parameters", 0)),
        # Not in 1.13's logging data; the attribute is in both.
        "static_graph": bool(getattr(ddp_model, "static_graph", False)),
        "gradient_as_bucket_view": bool(data.get("gradient_as_bucket_view", 0)),
        "comm_hook": hook if hook else None,
        "num_parameter_tensors": int(data["num_parameter_tensors"]),
        "total_parameter_size_bytes": int(data.get("total_parameter_size_bytes", 0)),
        "dtypes": data.get("dtypes"),
    }


def write_json(directory, name, record):
    os.makedirs(directory, exist_ok=True)
    tmp = os.path.join(directory, name + ".tmp")
    with open(tmp, "w") as f:
        json.dump(record, f, indent=1)
    os.replace(tmp, os.path.join(directory, name))


def params_digest(models):
    """sha256 over every parameter's name and bytes in module order (models in
    creation order), plus the first values of each for a readable diff."""
    digest = hashlib.sha256()
    head = {}
    for prefix, model in models.items():
        for name, p in model.named_parameters():
            name = f"{prefix}.{name}"
            values = p.detach().to("cpu").contiguous()
            digest.update(name.encode())
            digest.update(values.numpy().tobytes())
            head[name] = [float(v) for v in values.flatten()[:4]]
    return {"sha256": digest.hexdigest(), "head": head}


def main():
    args = parse_args()
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    base = {"torch": torch.__version__, "loop": args.loop, "rank": rank, "world_size": world}
    if args.loop == "compile" and not hasattr(torch, "compile"):
        # Nothing to run, and no process group: the record is the skip.
        base["skipped"] = f"torch.compile needs torch 2.x (this is {torch.__version__})"
        write_json(args.truth_dir, f"truth-{rank}.json", base)
        if rank == 0:
            print(base["skipped"])
        return 0

    if args.device == "cuda":
        device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", rank)) %
                              torch.cuda.device_count())
        torch.cuda.set_device(device)
        dist.init_process_group(backend="nccl", device_id=device)
    else:
        device = torch.device("cpu")
        dist.init_process_group(backend="gloo")
    torch.manual_seed(1234)
    t = Loop(args, rank, world, device)
    start = time.perf_counter()
    LOOPS[args.loop](t)
    elapsed = time.perf_counter() - start
    # Every rank done before the ranks tear down (see shutdown); a user
    # collective like the loop's own, and counted as one.
    t.user_barrier()

    instances = []
    for i, model in enumerate(t.instances):
        instances.append(dict(instance_truth(model), sync_backwards=t.sync_backwards[i]))
    record = dict(base, optimizer_steps=t.optimizer_steps, micro_batches=t.micro_batches,
                  expected_shadow_steps=t.expected_shadow_steps, instances=instances,
                  user_collectives={"calls": t.user_calls, "bytes": t.user_bytes},
                  elapsed_s=elapsed, **t.extra)
    write_json(args.truth_dir, f"truth-{rank}.json", record)
    if args.params_out:
        write_json(args.params_out, f"params-rank{rank}.json",
                   dict(params_digest(t.models), rank=rank))
    if rank == 0:
        print(f"loop {args.loop}: {t.optimizer_steps} steps on rank 0, {world} ranks, "
              f"{elapsed:.2f} s")
        sys.stdout.flush()
    shutdown(t)
    return 0


def shutdown(t):
    """Tear DDP down while the interpreter is fully alive, after a barrier
    (main's) and a GIL-free pause (examples/ddp_train.py: Debian's torch 1.13
    can deadlock at exit when a Reducer destroys the Gloo group while a Gloo
    worker still waits for the GIL)."""
    time.sleep(0.05)
    t.instances.clear()
    t.models.clear()
    gc.collect()
    dist.destroy_process_group()


if __name__ == "__main__":
    sys.exit(main())
