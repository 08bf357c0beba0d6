"""ddpscope's Python start-up hook.

`ddpscope record` puts this folder first on PYTHONPATH, so Python's site module
imports this file at start-up (the way OpenTelemetry's auto-instrumentation
does). It installs ddpscope_ddp, which waits for DistributedDataParallel to be
imported and then notes, read-only, what DDP itself knows: its bucket layout,
and which collectives its reducer, its forward and the user's own code issued.

It must never change what the job does: any failure here is swallowed, and the
sitecustomize this file shadows (Debian ships one, so may the user) is loaded
right after, exactly as Python would have loaded it.
"""


def _ddpscope_install():
    import os

    if not os.environ.get("DDPSCOPE_OUT") or os.environ.get("DDPSCOPE_PYTHON", "1") == "0":
        return
    try:
        import ddpscope_ddp

        ddpscope_ddp.install()
    except Exception:  # never let the profiler break the job's start-up
        pass
    try:
        from ddpscope_ddp import stacks

        stacks.install()
    except Exception:
        pass


def _ddpscope_chain_load():
    """Import the next sitecustomize on sys.path, the one ours hides."""
    import importlib
    import os
    import sys

    here = os.path.dirname(os.path.abspath(__file__))
    saved_path = list(sys.path)
    ours = sys.modules.pop("sitecustomize", None)
    try:
        sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
        importlib.import_module("sitecustomize")
    except ImportError as e:
        if e.name != "sitecustomize":
            raise  # their sitecustomize failed: Python would report it too
        if ours is not None:
            sys.modules["sitecustomize"] = ours
    finally:
        sys.path[:] = saved_path


_ddpscope_install()
_ddpscope_chain_load()
