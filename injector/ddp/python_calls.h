// What the start-up hook's builtins share (fsdp_builtins.cpp: FSDP's
// collectives and marks; region_builtins.cpp: DDP's regions and the user's
// collectives): the objects the hook hands over once, and the few reads every
// one of them makes of a collective's call. Called with the GIL held.
#pragma once

#include <cstdint>
#include <initializer_list>

#include "injector/ddp/python_api.h"

namespace ddpscope::inject::hook {

using py::Object;

// The process's Python, set by bind(); null before.
extern const py::Api* api;

// The hook's objects (native.py), kept once: the thread's open regions
// (native._local, .stack), the groups that keep no numbers
// (native.unnumbered), the slow, remembering sequence_number(pg), and the
// marker a noted call leaves on the region stack while it runs (so that the
// collectives torch calls inside it, an alias calling its new name, stay its
// own). False where this Python lacks part of its C API. Idempotent.
bool bind(const py::Api* p, Object* region_local, Object* unnumbered, Object* sequence_number,
          Object* marker);

// A tuple of the builtins `defs` describe, bound (bind) to the hook's
// objects, for an extern "C" maker the hook calls once through ctypes.PyDLL
// (the GIL held); None where this Python lacks part of the C API, null where
// it has none (ctypes then raises "PyObject is NULL", which the hook catches).
Object* make_builtins(std::initializer_list<py::MethodDef*> defs, Object* region_local,
                      Object* unnumbered, Object* sequence_number, Object* marker);

// o's integer value, or `otherwise` (no exception left behind).
int64_t as_int(Object* o, int64_t otherwise);

// The group's collective count now, or -1.
int64_t sequence_number(Object* pg);

// The thread's region stack (made when it has none), as a new reference.
Object* region_stack();

// The collective's group, as a new reference: `group=` if given (even None),
// else its place among the positional arguments; None there means the
// default group (default_group()). Null where there is none.
Object* group_of(Object* args, Object* kwargs, ssize_t index, Object* default_group);

// True where the call's `async_op=` is true.
bool async_op(Object* kwargs);

// fn(*args, **kwargs) with the marker on `stack` meanwhile; if the marker
// cannot be pushed, the call alone (the job's call is never lost to ours).
// *t_begin and *t_end: clock() just before and after.
Object* call_marked(Object* stack, Object* fn, Object* args, Object* kwargs, int64_t (*clock)(),
                    int64_t* t_begin, int64_t* t_end);

}  // namespace ddpscope::inject::hook
