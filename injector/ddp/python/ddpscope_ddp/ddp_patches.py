"""DistributedDataParallel, followed: its constructor, forward, comm hooks and
join hook become regions (native.py), and each instance's configuration and
bucket layout become facts (ddp_info rows, keys in docs/schema.md).

Instances are numbered in creation order per process and kept in a weak map:
nothing is stored on the user's module.
"""

import functools
import inspect
import sys
import weakref

from ddpscope_ddp import native
from ddpscope_ddp.native import (COMM_HOOK, FORWARD, GRAD_ENABLED, INIT, JOIN_FINAL,
                                 JOIN_SHADOW, REBUILT, SHADOW, SYNC, Region)

_instances = weakref.WeakKeyDictionary()  # DDP module -> instance number
# DDP module -> forwards left to look for its rebuilt layout (0: noted, or given up)
_rebuilt_looks = weakref.WeakKeyDictionary()
_REBUILT_LOOKS = 32
_count = [0]


def patch(mod):
    ddp = mod.DistributedDataParallel
    ddp.__init__ = _follow_init(ddp.__init__)
    if hasattr(ddp, "_pre_forward") and hasattr(ddp, "_post_forward"):
        # torch 2.x: forward itself stays DDP's own, so torch.compile sees the
        # module it would see without us (it looks at forward's origin).
        ddp._pre_forward = _follow_pre_forward(ddp._pre_forward)
        ddp._post_forward = _follow_post_forward(ddp._post_forward)
    else:
        ddp.forward = _follow_forward(ddp.forward)
    ddp.register_comm_hook = _follow_register_comm_hook(ddp.register_comm_hook)
    ddp._register_builtin_comm_hook = _follow_builtin_hook(ddp._register_builtin_comm_hook)
    join_hook = getattr(mod, "_DDPJoinHook", None)
    if join_hook is not None:
        join_hook.main_hook = _follow_join_hook(join_hook.main_hook, JOIN_SHADOW, SHADOW)
        join_hook.post_hook = _follow_join_hook(join_hook.post_hook, JOIN_FINAL, 0)


def _default_group():
    from torch.distributed import distributed_c10d

    try:
        return distributed_c10d._get_default_group()
    except Exception:
        return None


def _follow_init(init):
    signature = inspect.signature(init)

    @functools.wraps(init)
    def __init__(self, *args, **kwargs):
        if native.compiling():
            return init(self, *args, **kwargs)
        try:
            guess = signature.bind(self, *args, **kwargs).arguments.get("process_group")
        except TypeError:
            guess = None
        instance = _count[0]
        _count[0] += 1
        region = Region(INIT, instance, guess or _default_group())
        with region:
            init(self, *args, **kwargs)
            if getattr(self, "process_group", None) is not region.pg:
                region.pg, region.seq_begin = getattr(self, "process_group", None), -1
        _instances[self] = instance
        try:
            _note_configuration(self, instance)
            _keep_regions_eager(type(self))
        except Exception as e:  # a torch we do not know: the job goes on
            native.notice(f"could not read DDP's configuration ({type(e).__name__}: {e})")
        return None

    return __init__


def _keep_regions_eager(cls):
    """torch.compile traces DDP's forward, and our pre/post-forward wrappers
    with it (where they stand aside). So the wrappers are marked not to be
    traced themselves (what they call, DDP's own code, is compiled as before)
    and the helpers that note the region never to be traced at all: dynamo
    must not see our code, which it cannot trace. Done once torch._dynamo is
    loaded (DDP's constructor loads it on torch 2.x), so that no job pays for
    importing it."""
    dynamo = sys.modules.get("torch._dynamo")
    if dynamo is None or getattr(cls, "_ddpscope_eager", False):
        return
    module = sys.modules[__name__]
    for name in ("_open_forward", "_close_forward", "_open_post_forward", "_close_post_forward"):
        setattr(module, name, dynamo.disable(getattr(module, name)))
    for name in ("_pre_forward", "_post_forward"):
        fn = cls.__dict__.get(name)
        if fn is not None and getattr(fn, "_ddpscope_region", False):
            setattr(cls, name, dynamo.disable(fn, recursive=False))
    cls._ddpscope_eager = True


# The helpers below are all a wrapper calls: under torch.compile they are the
# only frames of ours that run, and they run eagerly (see _keep_regions_eager).


def _open_forward(ddp):
    """A region for DDP's forward (or its pre-forward part) saying whether it
    is a training forward, or None where we stand aside."""
    try:
        return _open_training_region(ddp)
    except Exception as e:  # never into the job
        native.notice(f"could not follow a DDP forward ({type(e).__name__}: {e})")
        return None


def _open_training_region(ddp):
    instance = _instances.get(ddp)
    if instance is None or native.compiling():
        return None
    import torch

    flags = GRAD_ENABLED if torch.is_grad_enabled() else 0
    if getattr(ddp, "require_backward_grad_sync", True):
        flags |= SYNC
    region = Region(FORWARD, instance, ddp.process_group, flags=flags)
    rebuilt_before = getattr(ddp, "_has_rebuilt_buckets", False)
    region.__enter__()
    return region, rebuilt_before


def _close_forward(ddp, opened):
    """Adds whether DDP rebuilt its buckets meanwhile, and notes the region."""
    if opened is None:
        return
    region, rebuilt_before = opened
    try:
        if getattr(ddp, "_has_rebuilt_buckets", False) and not rebuilt_before:
            region.flags |= REBUILT
        region.__exit__(None, None, None)
        if not hasattr(ddp, "_post_forward"):
            _note_rebuilt_layout_once(ddp, region.instance)  # torch 1.x: forward is whole
    except Exception as e:
        native.notice(f"could not follow a DDP forward ({type(e).__name__}: {e})")


def _open_post_forward(ddp):
    try:
        instance = _instances.get(ddp)
        if instance is None or native.compiling():
            return None
        region = Region(FORWARD, instance, ddp.process_group)  # buffers after forward
        region.__enter__()
        return region
    except Exception as e:
        native.notice(f"could not follow a DDP forward ({type(e).__name__}: {e})")
        return None


def _close_post_forward(ddp, region):
    if region is None:
        return
    try:
        region.__exit__(None, None, None)
        _note_rebuilt_layout_once(ddp, region.instance)
    except Exception as e:
        native.notice(f"could not follow a DDP forward ({type(e).__name__}: {e})")


def _follow_forward(forward):
    """torch 1.x: DDP's forward is one function."""

    @functools.wraps(forward)
    def forward_followed(self, *inputs, **kwargs):
        opened = _open_forward(self)
        try:
            return forward(self, *inputs, **kwargs)
        finally:
            _close_forward(self, opened)

    return forward_followed


def _follow_pre_forward(pre_forward):
    """torch 2.x: join notices, bucket rebuild, buffer broadcast; the module's
    own forward (SyncBatchNorm's collectives, say) runs outside the region."""

    @functools.wraps(pre_forward)
    def pre_forward_followed(self, *inputs, **kwargs):
        opened = _open_forward(self)
        try:
            return pre_forward(self, *inputs, **kwargs)
        finally:
            _close_forward(self, opened)

    pre_forward_followed._ddpscope_region = True
    return pre_forward_followed


def _follow_post_forward(post_forward):
    @functools.wraps(post_forward)
    def post_forward_followed(self, output):
        region = _open_post_forward(self)
        try:
            return post_forward(self, output)
        finally:
            _close_post_forward(self, region)

    post_forward_followed._ddpscope_region = True
    return post_forward_followed


def _follow_register_comm_hook(register):
    @functools.wraps(register)
    def register_comm_hook(self, state, hook):
        instance = _instances.get(self)
        if instance is None:
            return register(self, state, hook)
        native.info(instance, "comm_hook", _hook_name(hook))
        return register(self, state, _bucket_region(self, instance, hook))

    return register_comm_hook


def _bucket_region(ddp, instance, hook):
    """The hook, called as DDP calls it, inside a region naming the bucket."""

    @functools.wraps(hook)
    def hook_followed(state, bucket):
        if native.compiling():
            return hook(state, bucket)
        try:
            index = int(bucket.index())
        except Exception:
            index = -1
        with Region(COMM_HOOK, instance, ddp.process_group, bucket=index):
            return hook(state, bucket)

    return hook_followed


def _hook_name(hook):
    inner = getattr(hook, "func", hook)  # functools.partial
    return getattr(inner, "__qualname__", None) or type(inner).__name__


def _follow_builtin_hook(register):
    @functools.wraps(register)
    def register_builtin(self, comm_hook_type):
        instance = _instances.get(self)
        if instance is not None:
            native.info(instance, "comm_hook", "builtin:" + str(comm_hook_type).split(".")[-1])
        return register(self, comm_hook_type)

    return register_builtin


def _follow_join_hook(method, kind, flags):
    @functools.wraps(method)
    def join_hook_followed(self, *args, **kwargs):
        if native.compiling():
            return method(self, *args, **kwargs)
        ddp = getattr(self, "ddp", None)
        instance = _instances.get(ddp) if ddp is not None else None
        if instance is None:
            return method(self, *args, **kwargs)
        with Region(kind, instance, ddp.process_group, flags=flags):
            return method(self, *args, **kwargs)

    return join_hook_followed


# --- facts -------------------------------------------------------------------


def _logging_data(ddp):
    try:
        return ddp._get_ddp_logging_data()
    except Exception:
        return {}


def _sizes(text):
    """DDP's '33280, 33280' (or '33280 33280') as '33280 33280'."""
    return " ".join(text.replace(",", " ").split()) if isinstance(text, str) else ""


def _reducer_parameters(ddp):
    """DDP._build_params_for_reducer's list, rebuilt read-only: the parameters
    that need gradients, in module order, shared ones once, ignored ones left
    out. Reducer bucket indices count in this list."""
    ignore = getattr(ddp, "parameters_to_ignore", set()) or set()
    seen, params = set(), []
    for module_name, module in ddp.module.named_modules():
        for name, p in module.named_parameters(recurse=False):
            if not p.requires_grad or f"{module_name}.{name}" in ignore or id(p) in seen:
                continue
            seen.add(id(p))
            params.append(p)
    return params


def _first_bucket(ddp):
    """The first bucket's limit on rebuild, and whether an explicit
    bucket_cap_mb sets it on this torch (2.x) or 1 MiB always does (1.x)."""
    from torch import distributed as dist

    default_first = getattr(dist, "_DEFAULT_FIRST_BUCKET_BYTES", 1 << 20)
    if hasattr(ddp, "bucket_bytes_cap_default"):
        first = default_first if ddp.bucket_bytes_cap_default else ddp.bucket_bytes_cap
        return first, 1
    return 1 << 20, 0


def _note_configuration(ddp, instance):
    import torch

    data = _logging_data(ddp)
    pg = ddp.process_group
    params = _reducer_parameters(ddp)
    first, explicit_rule = _first_bucket(ddp)
    facts = {
        "module": type(ddp.module).__name__,
        "torch_version": torch.__version__,
        "backend": data.get("backend_name", ""),
        "pg_key": id(pg),
        "pg_size": pg.size() if hasattr(pg, "size") else "",
        "pg_rank": pg.rank() if hasattr(pg, "rank") else "",
        "bucket_cap_bytes": int(getattr(ddp, "bucket_bytes_cap", 0)),
        "first_bucket_bytes": int(first),
        "explicit_cap_sets_first_bucket": explicit_rule,
        "find_unused_parameters": int(bool(ddp.find_unused_parameters)),
        "static_graph": int(bool(getattr(ddp, "static_graph", False))),
        "gradient_as_bucket_view": int(bool(ddp.gradient_as_bucket_view)),
        "broadcast_buffers": int(bool(getattr(ddp, "broadcast_buffers", False))),
        "bucket_sizes": _sizes(data.get("bucket_sizes")),
        "num_parameter_tensors": len(params),
        "param_bytes": " ".join(str(p.numel() * p.element_size()) for p in params),
        "param_dtypes": " ".join(str(p.dtype).replace("torch.", "") for p in params),
    }
    for key, value in facts.items():
        native.info(instance, key, value)


def _note_rebuilt_layout_once(ddp, instance):
    """DDP fills rebuilt_bucket_sizes in its logging data only at the sync
    forward after the rebuild: looked for once per forward until found, for at
    most _REBUILT_LOOKS forwards (no_sync() micro-batches leave it unfilled),
    so that a torch which never fills it costs nothing for the rest of the
    job; the analysis then reads the layout off the wire."""
    if not getattr(ddp, "_has_rebuilt_buckets", False):
        return
    left = _rebuilt_looks.get(ddp, _REBUILT_LOOKS)
    if left <= 0:
        return
    data = _logging_data(ddp)
    sizes = _sizes(data.get("rebuilt_bucket_sizes"))
    _rebuilt_looks[ddp] = left - 1 if not sizes else 0
    if not sizes:
        return
    native.info(instance, "rebuilt_bucket_sizes", sizes)
    order = data.get("rebuilt_per_bucket_param_indices")
    if isinstance(order, str):
        native.info(instance, "rebuilt_per_bucket_param_indices", order)
