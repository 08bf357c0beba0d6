"""The user's own collectives and torch's Join context, followed as regions.

A torch.distributed call made outside every DDP region is the user's (a loss
all-reduce for logging, say); made inside one, it is DDP's and is left to that
region. Made while FSDP communicates for a unit (the thread's entry in
fsdp_patches._contexts), it is FSDP's, and noted with the unit and phase.
Join's own counting of the ranks still training is join control.
"""

import functools
import inspect
from _thread import get_ident

from ddpscope_ddp import fsdp_events, fsdp_patches, native
from ddpscope_ddp.native import JOIN_CONTROL, USER, Region

# The public collectives of torch.distributed that take a `group`.
_COLLECTIVES = (
    "all_reduce", "all_reduce_coalesced", "broadcast", "reduce", "all_gather",
    "all_gather_into_tensor", "_all_gather_base", "all_gather_coalesced", "reduce_scatter",
    "reduce_scatter_tensor", "_reduce_scatter_base", "all_to_all", "all_to_all_single",
    "gather", "scatter", "barrier", "all_gather_object", "broadcast_object_list",
    "gather_object", "scatter_object_list", "monitored_barrier", "all_gather_single",
    "reduce_scatter_single",
)


# No data of a unit's: a barrier FSDP issues (its symmetric-memory allocator
# does) is not one of its unit's collectives.
_SYNC_ONLY = ("barrier", "monitored_barrier")


def patch_collectives(mod):
    for name in _COLLECTIVES:
        fn = getattr(mod, name, None)
        if callable(fn):
            setattr(mod, name, _follow_user_call(mod, name, fn))


def _group_index(fn):
    """Where `group` is among fn's positional parameters (large: nowhere)."""
    try:
        return list(inspect.signature(fn).parameters).index("group")
    except (TypeError, ValueError):
        return 1 << 30


def _follow_user_call(mod, name, fn):
    index = _group_index(fn)
    fsdp_ok = name not in _SYNC_ONLY
    # FSDP's post_backward leaves the phase to the op it calls.
    reduction = fsdp_patches.ALL_REDUCE if name.startswith("all_reduce") else fsdp_patches.REDUCE_SCATTER
    fsdp_contexts, noted = fsdp_patches._contexts, fsdp_events.collective

    def default_group():
        try:
            return mod._get_default_group()
        except Exception:
            return None

    @functools.wraps(fn)
    def user_call(*args, **kwargs):
        # FSDP's own, for one of its units (its wrapper checked compiling
        # before it set the context): one builtin call, no Python frame, on
        # every collective FSDP issues (fsdp_events.collective).
        if fsdp_contexts and fsdp_ok:
            fsdp = fsdp_contexts.get(get_ident())
            if fsdp is not None:
                return noted(fsdp, reduction, index, default_group, fn, args, kwargs)
        if native.compiling() or native.inside_region():
            return fn(*args, **kwargs)
        group = kwargs.get("group", args[index] if len(args) > index else None)
        group = group if group is not None else default_group()
        if group is None:
            return fn(*args, **kwargs)
        with Region(USER, -1, group):
            return fn(*args, **kwargs)

    return user_call


def patch_join(mod):
    join = mod.Join
    exit_ = join.__exit__

    @functools.wraps(exit_)
    def __exit__(self, *exc):
        if native.compiling():
            return exit_(self, *exc)
        with Region(JOIN_CONTROL, -1, getattr(self, "_process_group", None)):
            return exit_(self, *exc)

    join.__exit__ = __exit__
