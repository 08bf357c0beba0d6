"""FSDP's regions and marks, noted by two builtins the injector makes
(injector/ddp/fsdp_builtins.cpp), since on every collective FSDP issues for a
unit each Python frame the hook adds costs microseconds of the step:

  collective(context, reduction, index, default_group, fn, args, kwargs)
      fn(*args, **kwargs), FSDP's own for the unit and phase in `context`
      (the thread's entry in fsdp_patches._contexts), timed, with the
      group's sequence number after it; the call's own result or exception,
      unchanged. Inside another region (its stack, native._local.stack, not
      empty) it is only the call.
  mark(kind, unit, pg_key, t_begin)
      a moment with no collective (a wait, a step's start or end) from
      t_begin (clock()) to now; never raises.

Each event goes straight into the thread's ring of the injector, as every
other hook's does. Where the injector cannot make them, both are None and
FSDP is not followed.
"""

import time

from ddpscope_ddp import native

clock = time.monotonic_ns  # the builtins' own clock (CLOCK_MONOTONIC)

try:
    collective, mark = native.made_builtins("ddpscope_py_fsdp_builtins")
except Exception as e:  # FSDP is then not followed (fsdp_patches); DDP still is
    collective = mark = None
    missing = f"{type(e).__name__}: {e}"
