"""The injector's C entry points (ctypes: injector/ddp/ddp_source.cpp) and
builtins (made in this Python: injector/ddp/region_builtins.cpp,
fsdp_builtins.cpp), and regions.

A region is a stretch of Python that may issue collectives on one process
group: it records the group's sequence number before and after (torch numbers
every collective a group issues), its kind, and the DDP instance it belongs
to. Regions nest per thread; a user region is only opened outside all others,
so DDP's own calls to torch.distributed stay DDP's.
"""

import ctypes
import os
import sys
import threading
import weakref

# DdpRegionKind (profiler/core/records.h)
INIT, FORWARD, COMM_HOOK, JOIN_SHADOW, JOIN_FINAL, JOIN_CONTROL, USER = range(7)
# DdpRegionFlag
SYNC, GRAD_ENABLED, REBUILT, SHADOW = 1, 2, 4, 8

_lib = None


class _Local(threading.local):
    """Per thread: its open regions. Defaults on the class, so that the hot
    path reads an attribute rather than calling getattr."""

    stack = None


_local = _Local()
_noticed = set()


def load():
    """Binds the preloaded injector; False when there is none or it is off."""
    global _lib
    try:
        lib = ctypes.CDLL(None)
        lib.ddpscope_py_recording.restype = ctypes.c_int
        lib.ddpscope_py_now.restype = ctypes.c_uint64
        lib.ddpscope_py_region.restype = None
        lib.ddpscope_py_region.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int,
                                           ctypes.c_int64, ctypes.c_int64, ctypes.c_int64,
                                           ctypes.c_uint32, ctypes.c_uint64, ctypes.c_uint64]
        lib.ddpscope_py_info.restype = None
        lib.ddpscope_py_info.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_char_p]
        lib.ddpscope_py_fsdp_info.restype = None
        lib.ddpscope_py_fsdp_info.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_char_p]
    except (OSError, AttributeError):
        return False
    if not lib.ddpscope_py_recording():
        return False
    _lib = lib
    _bind_builtins()
    return True


# The marker a builtin's call leaves on the region stack while it runs (so
# that the collectives torch calls inside it, an alias calling its new name,
# stay its own).
IN_CALL = type("InCall", (), {"__slots__": (), "flags": 0})()

# The injector's region builtins (injector/ddp/region_builtins.cpp), where it
# could make them in this Python: user_call(index, default_group, fn, args,
# kwargs), region(...) and now(); else user_call is None, and regions go
# through ctypes' entry points of the same parameters.
user_call = _region = _now = None


def _bind_builtins():
    global user_call, _region, _now
    try:
        user_call, _region, _now = made_builtins("ddpscope_py_region_builtins")
    except Exception as e:  # regions then go through ctypes, as before
        _region, _now = _lib.ddpscope_py_region, _lib.ddpscope_py_now
        notice(f"regions noted through ctypes ({type(e).__name__}: {e})")


def notice(text):
    """One line on stderr per distinct notice, unless DDPSCOPE_QUIET=1."""
    if text in _noticed or os.environ.get("DDPSCOPE_QUIET") == "1":
        return
    _noticed.add(text)
    sys.stderr.write(f"ddpscope: {text}\n")


def info(instance, key, value):
    if _lib is not None:
        _lib.ddpscope_py_info(int(instance), str(key).encode(), str(value).encode())


def made_builtins(maker):
    """The builtins the injector's `maker` makes in this Python's own C API
    (FSDP's, fsdp_events.py; the regions', above), bound to this module's
    region stack, unnumbered groups, sequence_number and IN_CALL. Called with
    the GIL held (ctypes.PyDLL). Raises where the injector finds no C API to
    make them."""
    make = getattr(ctypes.PyDLL(None), maker)
    make.restype = ctypes.py_object
    bound = (_local, unnumbered, sequence_number, IN_CALL)
    make.argtypes = [ctypes.py_object] * len(bound)
    made = make(*bound)
    if made is None:
        raise RuntimeError("the injector could not make its builtins in this Python")
    return made


def fsdp_info(unit, key, value):
    if _lib is not None:
        _lib.ddpscope_py_fsdp_info(int(unit), str(key).encode(), str(value).encode())


# Groups whose backend keeps no sequence numbers (torch's fake group, some
# third-party backends), by id, each with a weak reference that tells a
# reused id from the group itself. Asking them again would cost a C++
# exception, with its backtrace, on every collective.
unnumbered = {}


def sequence_number(pg):
    """The group's collective count (torch's desync-debug counter), or -1."""
    known = unnumbered.get(id(pg))
    if known is not None and known() is pg:
        return -1
    try:
        return int(pg._get_sequence_number_for_group())
    except Exception:
        try:
            unnumbered[id(pg)] = weakref.ref(pg)
        except TypeError:  # not weakly referable: asked each time
            pass
        return -1


def _stack():
    stack = _local.stack
    if stack is None:
        stack = _local.stack = []
    return stack


def inside_region():
    return bool(_local.stack)


class Region:
    """with Region(kind, instance, pg): ...  notes what the block issued on pg."""

    __slots__ = ("kind", "instance", "pg", "bucket", "flags", "seq_begin", "t_begin")

    def __init__(self, kind, instance, pg, bucket=-1, flags=0):
        self.kind, self.instance, self.pg = kind, instance, pg
        self.bucket, self.flags = bucket, flags

    def __enter__(self):
        stack = _stack()
        if stack and stack[-1].flags & SHADOW:
            self.flags |= SHADOW
        stack.append(self)
        self.seq_begin = sequence_number(self.pg) if self.pg is not None else -1
        self.t_begin = _now() if _lib is not None else 0
        return self

    def __exit__(self, *exc):
        # Emitted on errors too: what was issued before one was still issued.
        seq_end = sequence_number(self.pg) if self.pg is not None else -1
        stack = _stack()
        if stack and stack[-1] is self:
            stack.pop()
        # A region that issued nothing matters only as a training forward
        # (it opens a backward pass) or where DDP rebuilt its buckets.
        issued = seq_end < 0 or seq_end != self.seq_begin
        if _lib is not None and (issued or self.flags & (SYNC | REBUILT)):
            _region(self.kind, self.instance, self.bucket,
                    id(self.pg) if self.pg is not None else 0,
                    self.seq_begin if seq_end >= 0 else -1, seq_end, self.flags, self.t_begin,
                    _now())
        return False


_is_compiling = None


def compile_check():
    """torch's own `torch.compiler.is_compiling` (torch 1.x has no
    torch.compile: a function that says False), for wrappers to bind once;
    under torch.compile's tracing it is True, so wrappers stay out of the
    graph."""
    global _is_compiling
    if _is_compiling is None:
        torch = sys.modules.get("torch")
        compiler = getattr(torch, "compiler", None) if torch is not None else None
        _is_compiling = getattr(compiler, "is_compiling", None) or (lambda: False)
    return _is_compiling


def compiling():
    """True while torch.compile traces: wrappers then stay out of the graph."""
    return compile_check()()


def fast_compile_check():
    """(dynamo_compiling, compiler) for a hot wrapper to test as
    `dynamo_compiling() or compiler._is_compiling_flag`, which is what
    torch.compiler.is_compiling() says, at one Python frame instead of two:
    is_compiling also asks torch.jit.is_scripting(), False wherever Python
    runs a wrapper, then reads that flag (export's tracing sets it); dynamo
    folds is_dynamo_compiling() to True while it traces. FSDP's wrappers run
    it on every collective, where each frame costs about a microsecond of
    cold caches. A torch without either: compile_check() alone."""
    torch = sys.modules.get("torch")
    compiler = getattr(torch, "compiler", None) if torch is not None else None
    dynamo_compiling = getattr(compiler, "is_dynamo_compiling", None)
    if dynamo_compiling is None or not hasattr(compiler, "_is_compiling_flag"):
        return compile_check(), _NO_FLAG
    return dynamo_compiling, compiler


_NO_FLAG = type("NoFlag", (), {"__slots__": (), "_is_compiling_flag": False})()
