"""The user's own collectives and torch's Join context, followed as regions.

A torch.distributed call made outside every DDP region is the user's (a loss
all-reduce for logging, say); made inside one, it is DDP's and is left to that
region. Made while FSDP communicates for a unit (the thread's entry in
fsdp_patches._contexts), it is FSDP's, and noted with the unit and phase.
Join's own counting of the ranks still training is join control.
"""

import functools
import inspect
import os
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

    noted_user_call = native.user_call  # the builtin (None: the ctypes way below)
    checks = []  # torch's compile checks (native.fast_compile_check)

    def outside_fsdp(args, kwargs):
        """A collective of the user's (or DDP's, inside its region): one
        builtin call (it passes a call inside a region on), where the
        injector made it."""
        if not checks:  # bound at the first call: torch is whole by then, not at patch time
            checks.extend(native.fast_compile_check())
        dynamo_compiling, compiler = checks
        if dynamo_compiling() or compiler._is_compiling_flag:
            return fn(*args, **kwargs)
        if noted_user_call is not None:
            return noted_user_call(index, default_group, fn, args, kwargs)
        if native.inside_region():
            return fn(*args, **kwargs)
        group = kwargs.get("group", args[index] if len(args) > index else None)
        group = group if group is not None else default_group()
        if group is None:
            return fn(*args, **kwargs)
        with Region(USER, -1, group):
            return fn(*args, **kwargs)

    exact = _same_parameters(fn, name, fsdp_contexts, fsdp_ok, get_ident, noted, reduction,
                             index, default_group, outside_fsdp)
    if exact is not None:
        return exact

    @functools.wraps(fn)
    def user_call(*args, **kwargs):
        # FSDP's own, for one of its units (its wrapper checked compiling
        # before it set the context): one builtin call, no Python frame, on
        # every collective FSDP issues (fsdp_events.collective). The same
        # test as the wrapper _same_parameters makes, for a collective of
        # another shape.
        if fsdp_contexts and fsdp_ok:
            fsdp = fsdp_contexts.get(get_ident())
            if fsdp is not None:
                return noted(fsdp, reduction, index, default_group, fn, args, kwargs)
        return outside_fsdp(args, kwargs)

    return user_call


# The wrapper of a collective with fn's own parameters, made from this text:
# FSDP calls its collectives with keywords (group=, async_op=), and a wrapper
# of *args and **kwargs builds a dict of them, which the builtin then
# unpacks again for fn, on every collective FSDP issues. With fn's
# parameters, the call's values arrive in the wrapper's locals and go on
# as a tuple (keyword-only ones as keywords).
_EXACT = """
def make(fsdp_contexts, fsdp_ok, get_ident, noted, reduction, index, default_group,
         outside_fsdp, fn):
    def {name}({parameters}):
        if fsdp_contexts and fsdp_ok:
            fsdp = fsdp_contexts.get(get_ident())
            if fsdp is not None:
                return noted(fsdp, reduction, index, default_group, fn, ({positional}), {keywords})
        return outside_fsdp(({positional}), {keywords} or {{}})
    return {name}
"""
# The names the wrapper's body uses: a parameter of one of them would shadow it.
_EXACT_NAMES = {"fsdp_contexts", "fsdp_ok", "get_ident", "noted", "reduction", "index",
                "default_group", "outside_fsdp", "fn", "fsdp"}


def _same_parameters(fn, name, *bound):
    """fn's wrapper with fn's parameters (names, kinds and defaults), or
    None where fn takes *args or **kwargs, or a parameter the wrapper's own
    names would shadow: the caller then wraps it the general way."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return None
    kinds = {p.kind for p in params}
    if (inspect.Parameter.VAR_POSITIONAL in kinds or inspect.Parameter.VAR_KEYWORD in kinds
            or any(p.name in _EXACT_NAMES or not p.name.isidentifier() for p in params)):
        return None
    text, positional, keywords = [], [], []
    for i, p in enumerate(params):
        if p.kind == p.KEYWORD_ONLY and (i == 0 or params[i - 1].kind != p.KEYWORD_ONLY):
            text.append("*")
        text.append(p.name)
        if p.kind == p.POSITIONAL_ONLY and (i + 1 == len(params) or
                                            params[i + 1].kind != p.POSITIONAL_ONLY):
            text.append("/")
        (keywords if p.kind == p.KEYWORD_ONLY else positional).append(p.name)
    source = _EXACT.format(
        name=name, parameters=", ".join(text),
        positional="".join(f"{n}, " for n in positional),
        keywords="{" + ", ".join(f"{n!r}: {n}" for n in keywords) + "}" if keywords else "None")
    # Named as a file of this package, so that a stack through it is the
    # hook's, not the user's (profiler/analysis/python_stacks.cpp: users_code).
    namespace = {}
    exec(compile(source, os.path.join(os.path.dirname(__file__), f"c10d_patches.{name}.py"),
                 "exec"), namespace)
    wrapper = namespace["make"](*bound, fn)
    empty = inspect.Parameter.empty
    wrapper.__defaults__ = tuple(p.default for p in params
                                 if p.kind != p.KEYWORD_ONLY and p.default is not empty) or None
    wrapper.__kwdefaults__ = {p.name: p.default for p in params
                              if p.kind == p.KEYWORD_ONLY and p.default is not empty} or None
    return functools.update_wrapper(wrapper, fn)


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
