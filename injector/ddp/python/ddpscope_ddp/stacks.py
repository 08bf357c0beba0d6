"""Python's own stacks on request, for ddpscope record (docs/hangs.md).

When record asks for it (DDPSCOPE_STACK_SIGNAL, a signal number), this
registers Python's faulthandler on that signal for every thread, chaining a
handler the job has (if it has one), into DDPSCOPE_OUT/stacks-<pid>.txt. record sends the
signal to a rank it finds stuck (--hang-after) or is told to stop, before
stopping it, and keeps the file in the run database. Nothing else changes:
the job never sees the signal unless it registered one itself (then it runs
after the dump). An empty file is removed when the process exits.
"""
import atexit
import faulthandler
import os
import signal


def _remove_if_empty(path, f):
    try:
        f.close()
        if os.path.getsize(path) == 0:
            os.unlink(path)
    except OSError:
        pass


def install():
    sig = os.environ.get("DDPSCOPE_STACK_SIGNAL", "")
    out = os.environ.get("DDPSCOPE_OUT", "")
    if not sig.isdigit() or not out:
        return
    path = os.path.join(out, f"stacks-{os.getpid()}.txt")
    f = open(path, "w")
    # Chained only to a handler the job has: chaining to the default action
    # would end the process (a real-time signal's default is to terminate).
    theirs = signal.getsignal(int(sig))
    chain = theirs not in (signal.SIG_DFL, signal.SIG_IGN, None)
    faulthandler.register(int(sig), file=f, all_threads=True, chain=chain)
    atexit.register(_remove_if_empty, path, f)
