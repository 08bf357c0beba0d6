#!/usr/bin/env python3
"""NCCL calls a process can make without a GPU, through the wheel's libnccl.so.2
loaded the way torch loads it (RTLD_LOCAL, by libtorch_cuda.so's RPATH).

Prints one line per call: its outcome (NCCL return code or exception), nothing
that could differ between a plain run and one under `ddpscope record`.
test_nccl_wheel.py runs it both ways and compares.

Each NCCL entry point is taken from the global scope (ctypes.CDLL(None)) where it
is there: under `ddpscope record` that is the injector's hook, as torch's own
calls from libtorch_cuda.so would find it. In a plain run the global scope has no
NCCL (the wheel is RTLD_LOCAL), so the same function comes from the loaded
library itself. A handle on the library alone would bypass the hook.
"""
import ctypes
import sys

import torch

NCCL_LIB = "nvidia/nccl/lib/libnccl.so.2"


class UniqueId(ctypes.Structure):
    _fields_ = [("internal", ctypes.c_char * 128)]


def loaded_nccl():
    with open("/proc/self/maps") as f:
        paths = {line.split()[-1] for line in f if line.rstrip().endswith(NCCL_LIB)}
    if len(paths) != 1:
        sys.exit(f"expected torch to have loaded one {NCCL_LIB}, found {sorted(paths)}")
    return ctypes.CDLL(paths.pop())  # already loaded: the same object, still RTLD_LOCAL


def outcome(fn):
    try:
        return repr(fn())
    except Exception as e:  # the message is the outcome, not a failure of this script
        return f"raised {type(e).__name__}: {e}"


def main():
    print("cuda available:", torch.cuda.is_available())
    print("torch.cuda.nccl.version:", outcome(torch.cuda.nccl.version))
    uid_bytes = None

    def unique_id():
        nonlocal uid_bytes
        uid_bytes = torch.cuda.nccl.unique_id()
        return f"{len(uid_bytes)} bytes"

    print("torch.cuda.nccl.unique_id:", outcome(unique_id))
    uid_bytes = uid_bytes or bytes(128)
    print("torch.cuda.nccl.init_rank:",
          outcome(lambda: type(torch.cuda.nccl.init_rank(1, uid_bytes, 0)).__name__))

    lib, glob = loaded_nccl(), ctypes.CDLL(None)

    def nccl(name):
        fn = getattr(glob, name, None)
        # Which way it went goes to stderr: the test wants stdout identical.
        print(f"{name} from", "the global scope" if fn else "the library", file=sys.stderr)
        fn = fn or getattr(lib, name)
        fn.restype = ctypes.c_int
        return fn

    uid = UniqueId.from_buffer_copy(uid_bytes)
    comm = ctypes.c_void_p()
    calls = [
        ("ncclGroupStart", lambda: nccl("ncclGroupStart")()),
        ("ncclGroupEnd", lambda: nccl("ncclGroupEnd")()),
        ("ncclCommInitRank", lambda: nccl("ncclCommInitRank")(ctypes.byref(comm), 1, uid, 0)),
        ("ncclCommInitRankConfig",
         lambda: nccl("ncclCommInitRankConfig")(ctypes.byref(comm), 1, uid, 0, None)),
        ("ncclCommInitAll", lambda: nccl("ncclCommInitAll")(ctypes.byref(comm), 1, None)),
        ("ncclAllReduce(comm=NULL)",
         lambda: nccl("ncclAllReduce")(None, None, ctypes.c_size_t(0), 7, 0, None, None)),
        ("ncclCommSplit(comm=NULL)",
         lambda: nccl("ncclCommSplit")(None, 0, 0, ctypes.byref(comm), None)),
        ("ncclCommFinalize(NULL)", lambda: nccl("ncclCommFinalize")(None)),
        ("ncclCommDestroy(NULL)", lambda: nccl("ncclCommDestroy")(None)),
        ("ncclCommAbort(NULL)", lambda: nccl("ncclCommAbort")(None)),
    ]
    for name, call in calls:
        print(f"{name}:", outcome(call))
    print("comm after the inits:", "NULL" if not comm.value else "set")
    # None of the calls above leaves an event (no communicator, nothing enqueued),
    # and a rank file is written only when there is one. One NVTX range (host
    # only) makes ddpscope write it, and with it where each hook's calls went.
    torch.cuda.nvtx.range_push("nccl_wheel_calls")
    torch.cuda.nvtx.range_pop()


if __name__ == "__main__":
    main()
