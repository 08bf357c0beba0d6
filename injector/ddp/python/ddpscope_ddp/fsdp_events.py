"""FSDP's regions and marks, kept in this process and handed to the injector
in batches (injector/ddp/fsdp_source.cpp).

Every collective FSDP issues for a unit passes through fsdp_call, inside
FSDP's own hooks: there a ctypes call costs more than the rest of the hook's
work. So an event is eight integers appended to an array (kind, unit, group
key, sequence number, flags, thread, begin and end in CLOCK_MONOTONIC ns from
Python's own clock), and the array goes to C in one call at every step's
start and end (flush), when it grows past a bound, and at exit. A process
killed mid-step loses that step's events; the analysis drops an unfinished
step anyway.
"""

import array
import atexit
import os
import threading
import time

from ddpscope_ddp import native

_FIELDS = 8
_FLUSH_AT = _FIELDS * 512  # events kept at most between hand-overs
_events = array.array("q")


class _Local(threading.local):
    tid = None  # the thread's number in the rank file, once asked


_local = _Local()
clock = time.monotonic_ns

unnumbered = native.unnumbered  # groups that keep no sequence numbers
# On the region stack while an FSDP collective runs, so that the collectives
# torch calls inside it (an alias calling its new name) stay its own.
_IN_FSDP_CALL = type("InFsdpCall", (), {"__slots__": (), "flags": 0})()


def _thread():
    tid = _local.tid
    if tid is None:
        tid = _local.tid = native.thread_id()
    return tid


def flush():
    """Hands every kept event to the injector. The entry point holds the GIL
    (ctypes.PyDLL), so no thread appends while C reads the array."""
    n = len(_events)
    if n == 0 or native.fsdp_events_entry is None:
        return
    try:
        native.fsdp_events_entry(_events.buffer_info()[0], n // _FIELDS)
    except Exception as e:
        native.notice(f"could not note FSDP's events ({type(e).__name__}: {e})")
    del _events[:n]


def mark(kind, unit, pg_key, t_begin, hand_over=False):
    """An FSDP moment that issues no collective (a wait, a step's start or
    end), from t_begin to now. Never raises: it runs in `finally` blocks."""
    try:
        tid = _local.tid
        _events.extend((kind, unit, pg_key, -1, 0, _thread() if tid is None else tid, t_begin,
                        clock()))
        if hand_over or len(_events) >= _FLUSH_AT:
            flush()
    except Exception as e:
        native.notice(f"could not note an FSDP moment ({type(e).__name__}: {e})")


def fsdp_call(kind, unit, pg, flags, fn, args, kwargs):
    """fn(*args, **kwargs): one collective FSDP issued for a unit, noted with
    the group's sequence number after it (one below it numbers this one).
    One Python frame: on every collective's path."""
    stack = native._local.stack
    if stack is None:
        stack = native._local.stack = []
    stack.append(_IN_FSDP_CALL)
    t_begin = clock()
    try:
        result = fn(*args, **kwargs)
    except BaseException:
        stack.pop()  # a call that raised may have numbered none: no collective named
        mark(kind, unit, id(pg), t_begin)
        raise
    t_end = clock()
    known = unnumbered.get(id(pg))  # native.sequence_number, inline
    if known is not None and known() is pg:
        seq_end = -1
    else:
        try:
            seq_end = pg._get_sequence_number_for_group()
        except Exception:
            seq_end = native.sequence_number(pg)
    stack.pop()
    tid = _local.tid
    _events.extend((kind, unit, id(pg), seq_end, flags, _thread() if tid is None else tid,
                    t_begin, t_end))
    if len(_events) >= _FLUSH_AT:
        flush()
    return result


def _forget_in_child():
    """A forked child starts with none of its parent's events."""
    del _events[:]
    _local.__dict__.clear()


atexit.register(flush)
os.register_at_fork(after_in_child=_forget_in_child)
