"""FSDP2 (torch.distributed.fsdp.fully_shard), followed: each unit (an
FSDPParamGroup: the parameters one fully_shard call manages) becomes facts
(fsdp_info rows, keys in docs/schema.md), and each collective FSDP issues for
it a region naming the unit and the phase (fsdp_regions rows):

  forward_all_gather   unshard while the unit's training state is FORWARD
  backward_all_gather  unshard while it is PRE_BACKWARD
  reduce_scatter       the reduce-scatter of post_backward
  all_reduce           HSDP's all-reduce over the replicate group, also there

An all-gather issued by _prefetch_unshard (another unit asking ahead) is
flagged as a prefetch. Three marks without collectives time the rest: `wait`
(the unit waited for its parameters: wait_for_unshard, after a prefetched or
async all-gather), `step` (the root's
forward began a training step) and `backward_end` (the root's post-backward
callback: autograd is done).

Units are numbered in the order their roots were first run, per process, and
kept by the param group's id, each entry dropped when its group is collected
(weakref.finalize): nothing is stored on FSDP's objects, and the hot path
reads a plain dict (a weak map costs a new weak reference on every read). Built on FSDP's
structure as torch 2.11 to 2.15 have it; where an attribute is missing, the
fact or mark is left out and the job goes on.
"""

import functools
import inspect
import weakref
from _thread import get_ident

from ddpscope_ddp import fsdp_events, native

# FsdpRegionKind (profiler/core/records.h)
FORWARD_ALL_GATHER, BACKWARD_ALL_GATHER, REDUCE_SCATTER, ALL_REDUCE, WAIT, STEP, BACKWARD_END = range(7)
# FsdpRegionFlag (async_op's is set by fsdp_events.collective)
PREFETCH = 1

_units = {}  # id(FSDPParamGroup) -> unit number, while the group lives
_all_gather_pgs = {}  # unit number -> its all-gather group's key (for its waits)
_BACKWARD_STATES = set()  # ids of FSDP's TrainingState members of backward (an enum
# member's hash is Python code: its id is not)
_roots = {}  # id(root FSDPState) -> its unit numbers, while the state lives
_UNSHARDED = [None]  # FSDP's ShardedState.UNSHARDED, where this torch has it
_count = [0]


# Per thread, by its ident, while it is inside FSDP's communication for a
# unit: (unit, phase or None, flags) (phase None: post_backward, where the op
# decides: reduce_scatter or all_reduce); c10d_patches reads it. Empty
# otherwise, so that every other collective pays a test of an empty dict.
# Not a threading.local: each of its reads and writes cost about 500
# instructions, a quarter of the hook's count per step.
_contexts = {}
_prefetching = set()  # idents of threads inside _prefetch_unshard: another unit asked ahead
# id(FSDPParamGroup) -> its unit, for a group whose all-gather was prefetched
# or async, until its wait: only such a wait is marked. The wait for an
# all-gather a unit issued for itself, synchronously, follows it at once
# (FSDP's pre_forward and pre_backward) and tells the analysis nothing its
# issue did not (profiler/analysis/fsdp_units.cpp: its slack runs from the
# issue); most waits of a step are such, and pass on with one test.
_waits_wanted = {}


def _need_builtins():
    if fsdp_events.mark is None:  # the import hook notes it and the job goes on
        raise RuntimeError(fsdp_events.missing)


def patch_param_group(mod):
    _need_builtins()
    states = getattr(mod, "TrainingState", None)
    _BACKWARD_STATES.update(id(getattr(states, n)) for n in ("PRE_BACKWARD", "POST_BACKWARD")
                            if hasattr(states, n))
    _UNSHARDED[0] = getattr(getattr(mod, "ShardedState", None), "UNSHARDED", None)
    cls = mod.FSDPParamGroup
    cls.unshard = _follow_unshard(cls.unshard)
    cls.wait_for_unshard = _follow_wait(cls.wait_for_unshard)
    cls.post_backward = _follow_post_backward(cls.post_backward)
    prefetch = cls.__dict__.get("_prefetch_unshard")
    if isinstance(prefetch, staticmethod):
        cls._prefetch_unshard = staticmethod(_follow_prefetch(prefetch.__func__))


def patch_state(mod):
    _need_builtins()
    cls = mod.FSDPState
    cls._root_pre_forward = _follow_root_pre_forward(cls._root_pre_forward)
    callback = getattr(cls, "_root_post_backward_final_callback", None)
    if callback is not None:
        cls._root_post_backward_final_callback = _follow_backward_end(callback)


# --- the collective a unit issues --------------------------------------------
#
# On every collective's path: each wrapper is one frame that notes its event
# through fsdp_events' builtins (no ctypes call, no frame of their own), and
# checks compiling at one more frame (native.fast_compile_check, bound once).
# Each takes the parameters of the method it wraps, as torch 2.11 to 2.15
# name them (_same_shape): a wrapper of *args and **kwargs builds a tuple and
# a dict on every call and passes them on the slow way, five times the cost
# of the call itself.
#
# Their bodies stay Python. The same reads done by builtins were measured
# (bench/python_hook_overhead.py --fsdp --instructions): the step's hook
# bytecodes fell from 1,864 to 808 but the training thread's instructions did
# not move (+146,970 against +148,618 a step), nor did its time in five
# interleaved pairs: the cost is in the attribute and dictionary reads either
# makes (about 400 instructions each), and a builtin that calls FSDP's method
# runs it in a nested interpreter loop where a Python wrapper's call is inline.
# Wrappers that only pass their call on add about a fifth of that count.


def _shape(params):
    """Names and kinds; a *args's name does not matter to a caller."""
    return [("*" if p.kind == p.VAR_POSITIONAL else p.name, p.kind) for p in params]


def _same_shape(original, wrapper):
    """`wrapper` in place of `original` where their parameters are the same
    (names and kinds; the method's defaults are given to the wrapper);
    else `original` itself, not followed, with a notice: a torch whose FSDP
    differs loses that mark, never its call."""
    # Through torch's own decorators (2.15's _dynamo_disable and
    # _disable_functorch_if_active take *args, **kwargs) to the method.
    method = inspect.unwrap(original)
    try:
        ours = inspect.signature(wrapper, follow_wrapped=False).parameters.values()
        theirs = inspect.signature(method, follow_wrapped=False).parameters.values()
        same = _shape(ours) == _shape(theirs)
    except (TypeError, ValueError):
        same = False
    if not same:
        native.notice(f"FSDP's {getattr(original, '__qualname__', original)} is not as torch "
                      "2.11-2.15 have it: not followed")
        return original
    wrapper.__defaults__ = getattr(method, "__defaults__", None)
    wrapper.__kwdefaults__ = getattr(method, "__kwdefaults__", None)
    return functools.update_wrapper(wrapper, original)


def _follow_unshard(unshard):
    dynamo_compiling, compiler = native.fast_compile_check()
    unsharded = _UNSHARDED[0] or object()  # a torch without it: never equal

    def unshard_followed(self, async_op):
        unit = _units.get(id(self))
        # FSDP's unshard does nothing for a unit unsharded or unsharding
        # already (a third of the calls: the root's in backward, a prefetched
        # unit's own): passed on before any other work of ours.
        if (unit is None or getattr(self, "_all_gather_result", None) is not None or
                getattr(self, "_sharded_state", None) is unsharded or dynamo_compiling() or
                compiler._is_compiling_flag):
            return unshard(self, async_op)
        backward = id(getattr(self, "_training_state", None)) in _BACKWARD_STATES
        me = get_ident()
        flags = PREFETCH if _prefetching and me in _prefetching else 0
        if flags or async_op:
            _waits_wanted[id(self)] = unit
        saved = _contexts.get(me)
        _contexts[me] = (unit, BACKWARD_ALL_GATHER if backward else FORWARD_ALL_GATHER, flags)
        try:
            return unshard(self, async_op)
        finally:  # as it was (inline: a helper would be one more frame)
            if saved is None:
                del _contexts[me]
            else:
                _contexts[me] = saved

    return _same_shape(unshard, unshard_followed)


def _follow_prefetch(prefetch):
    def prefetch_followed(target_fsdp_param_group, pass_type):
        me = get_ident()
        if me in _prefetching:  # asked ahead from inside a prefetch: flagged already
            return prefetch(target_fsdp_param_group, pass_type)
        _prefetching.add(me)
        try:
            return prefetch(target_fsdp_param_group, pass_type)
        finally:
            _prefetching.discard(me)

    return _same_shape(prefetch, prefetch_followed)


def _follow_wait(wait):
    """The moment the unit needs its parameters, and how long it waited, for
    an all-gather prefetched or async (_waits_wanted)."""
    dynamo_compiling, compiler = native.fast_compile_check()
    clock, mark = fsdp_events.clock, fsdp_events.mark

    def wait_followed(self):
        unit = _waits_wanted.pop(id(self), None) if _waits_wanted else None
        if unit is None or dynamo_compiling() or compiler._is_compiling_flag:
            return wait(self)
        t_begin = clock()
        try:
            return wait(self)
        finally:
            mark(WAIT, unit, _all_gather_pgs.get(unit, 0), t_begin)

    return _same_shape(wait, wait_followed)


def _follow_post_backward(post_backward):
    dynamo_compiling, compiler = native.fast_compile_check()

    def post_backward_followed(self, *unused):
        unit = _units.get(id(self))
        if unit is None or dynamo_compiling() or compiler._is_compiling_flag:
            return post_backward(self, *unused)
        me = get_ident()
        saved = _contexts.get(me)
        _contexts[me] = (unit, None, 0)
        try:
            return post_backward(self, *unused)
        finally:
            if saved is None:
                del _contexts[me]
            else:
                _contexts[me] = saved

    return _same_shape(post_backward, post_backward_followed)


# --- the root: facts once, and the step's marks ------------------------------


def _follow_root_pre_forward(root_pre_forward):
    """Every state's forward calls it; only a root's begins a step. Its
    first call makes the roots (_lazy_init runs inside it), and the root's
    units are read then, before its forward unshards any of them: here
    rather than in a wrapper of _lazy_init, which every state's forward
    calls too, one more frame a unit a step."""

    def root_pre_forward_followed(self, module, args, kwargs):
        if getattr(self, "_is_root", None) is False:
            return root_pre_forward(self, module, args, kwargs)
        ctx = getattr(self, "_state_ctx", None)
        starts = ctx is not None and getattr(ctx, "iter_forward_root", None) is None
        t_begin = fsdp_events.clock()
        try:
            return root_pre_forward(self, module, args, kwargs)
        finally:
            units = _roots.get(id(self))
            if units is None and getattr(self, "_is_root", None):
                units = _first_seen_root(self)
            if starts and units:
                fsdp_events.mark(STEP, units[0], 0, t_begin)

    return _same_shape(root_pre_forward, root_pre_forward_followed)


def _follow_backward_end(callback):
    def backward_end_followed(self):
        units = _roots.get(id(self))
        if not units:
            return callback(self)
        t_begin = fsdp_events.clock()
        try:
            return callback(self)
        finally:
            fsdp_events.mark(BACKWARD_END, units[0], 0, t_begin)

    return _same_shape(callback, backward_end_followed)


def _first_seen_root(root):
    """The root's units, read from FSDP (None while compiling, or where
    this torch's structure is not known: the job goes on)."""
    if native.compiling():
        return None
    try:
        return _note_root(root)
    except Exception as e:
        native.notice(f"could not read FSDP's units ({type(e).__name__}: {e})")
        _roots[id(root)] = []  # said once (kept: a torch we cannot read stays so)
        return None


def _note_root(root):
    import torch

    units = []
    for state in getattr(root._state_ctx, "all_states", []):
        for group in getattr(state, "_fsdp_param_groups", None) or _single_group(state):
            if id(group) in _units:
                continue
            unit = _count[0]
            _count[0] += 1
            _units[id(group)] = unit
            weakref.finalize(group, _units.pop, id(group), None)
            units.append(unit)
            _note_unit(group, unit, units[0], torch)
    # The root module's own class: where it holds no parameters of its own,
    # its first unit (units[0], the root's number) is a child's.
    modules = getattr(root, "_modules", None) or ()
    if units and modules:
        native.fsdp_info(units[0], "root_module", _user_class(modules[0]))
    _roots[id(root)] = units
    weakref.finalize(root, _roots.pop, id(root), None)
    return units


def _single_group(state):
    group = getattr(state, "_fsdp_param_group", None)  # torch before grouped param groups
    return [group] if group is not None else []


def _user_class(module):
    """fully_shard swaps a module's class for FSDP<Class>, made in FSDP's own
    module, with FSDPModule: the user's class is the first of no FSDP module."""
    for cls in type(module).__mro__:
        if not getattr(cls, "__module__", "").startswith("torch.distributed.fsdp"):
            return cls.__name__
    return type(module).__name__



def _group_key(group, name):
    try:
        pg = getattr(group, name)
        return (id(pg), pg.size()) if pg is not None else (0, 0)
    except Exception:
        return (0, 0)


def _numel(param):
    """A parameter's own elements, before FSDP padded and sharded it."""
    size = getattr(param, "_orig_size", None)
    return size.numel() if size is not None else -1


def _dtype(params, attr):
    for p in params:
        d = getattr(p, attr, None) or getattr(p, "orig_dtype", None)
        if d is not None:
            return str(d).replace("torch.", "")
    return ""


def _note_unit(group, unit, root_unit, torch):
    params = list(group.fsdp_params)
    modules = getattr(group, "modules", ()) or ()
    ag_pg, ag_size = _group_key(group, "_all_gather_process_group")
    _all_gather_pgs[unit] = ag_pg
    rs_pg, rs_size = _group_key(group, "_reduce_scatter_process_group")
    hsdp = bool(getattr(group, "_is_hsdp", False))
    ar_pg, ar_size = _group_key(group, "_all_reduce_process_group") if hsdp else (0, 0)
    sharded = sum(p.padded_sharded_param_size.numel() for p in params)
    facts = {
        "root": root_unit,
        "fqn": getattr(group, "_module_fqn", None) or "",
        "module": " ".join(_user_class(m) for m in modules),
        "torch_version": torch.__version__,
        "params": len(params),
        "param_numels": " ".join(str(_numel(p)) for p in params),
        "padded_sharded_numel": sharded,
        "padded_unsharded_numel": sharded * ag_size,
        "all_gather_dtype": _dtype(params, "param_dtype"),
        "reduce_dtype": _dtype(params, "reduce_dtype"),
        "reshard_after_forward": int(bool(getattr(group, "_reshard_after_forward", True))),
        "all_gather_pg": ag_pg,
        "all_gather_size": ag_size,
        "reduce_scatter_pg": rs_pg,
        "reduce_scatter_size": rs_size,
        "all_reduce_pg": ar_pg,
        "all_reduce_size": ar_size,
    }
    for key, value in facts.items():
        native.fsdp_info(unit, key, value)
