// FSDP's hot path, in C. The start-up hook runs on every collective FSDP
// issues for a unit, inside FSDP's own hooks, where each Python frame it adds
// costs microseconds of a step (cold caches, not bytecodes). So the two calls
// it makes there are CPython builtins made here: `collective` (the call
// itself, timed, with the group's sequence number after it) and `mark` (a
// moment with no collective: a wait, a step's start or end). They run no
// Python frame and write each event straight into the thread's ring, like
// every other hook (fsdp_source.cpp).
//
// The c10d wrapper that calls `collective` stays a Python function, so that
// torch.compile traces through it; FSDP's wrappers set a unit's context only
// when not compiling, so the builtin is never met while tracing.
#include <time.h>

#include <cstdint>

#include "injector/ddp/fsdp_source.h"
#include "injector/ddp/python_api.h"
#include "injector/ddp/python_calls.h"
#include "profiler/core/records.h"

namespace ddpscope::inject::fsdp {
namespace {

using hook::api;
using hook::as_int;
using py::Object;

int64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);  // Python's time.monotonic_ns, the marks' clock
  return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// fn(*args, **kwargs), noted as the unit's collective: the caller's region
// stack holds the marker meanwhile, so that the collectives torch calls
// inside it (an alias calling its new name) stay this one.
Object* noted_call(const Region& what, Object* stack, Object* pg, Object* fn, Object* args,
                   Object* kwargs) {
  Region r = what;
  Object* result = hook::call_marked(stack, fn, args, kwargs, now_ns, &r.t_begin, &r.t_end);
  // A call that raised may have numbered none: no collective named.
  r.seq_end = result ? hook::sequence_number(pg) : -1;
  if (!result) r.flags = 0;
  note(r);
  return result;
}

// collective(context, reduction, index, default_group, fn, args, kwargs):
// fn(*args, **kwargs), FSDP's own for the unit and phase in `context`
// ((unit, phase or None, flags); None: post_backward's, `reduction` decides),
// unless it runs inside another region (then it is that region's).
Object* collective(Object*, Object* const* a, ssize_t nargs) {
  if (nargs != 7) {
    api->Err_SetString(api->type_error, "collective() takes 7 arguments");
    return nullptr;
  }
  Object *context = a[0], *fn = a[4], *args = a[5], *kwargs = a[6];
  if (kwargs == api->none) kwargs = nullptr;
  Object* stack = hook::region_stack();
  if (!stack) return api->Err_Clear(), api->Object_Call(fn, args, kwargs);
  Object* pg = nullptr;
  if (!api->Object_IsTrue(stack)) pg = hook::group_of(args, kwargs, as_int(a[2], 1 << 30), a[3]);
  Object* result;
  if (!pg) {
    result = api->Object_Call(fn, args, kwargs);
  } else {
    Object* phase = api->Tuple_GetItem(context, 1);
    Region r{.kind = int(as_int(phase && phase != api->none ? phase : a[1], -1)),
             .unit = int(as_int(api->Tuple_GetItem(context, 0), -1)),
             .pg_key = int64_t(reinterpret_cast<intptr_t>(pg)),  // Python's id(pg)
             .seq_end = -1,
             .flags = uint32_t(as_int(api->Tuple_GetItem(context, 2), 0)) |
                      (hook::async_op(kwargs) ? uint32_t(kFsdpAsync) : 0u),
             .t_begin = 0,
             .t_end = 0};
    api->Err_Clear();  // a context not of the hook's shape: noted as it reads
    result = noted_call(r, stack, pg, fn, args, kwargs);
    api->DecRef(pg);
  }
  api->DecRef(stack);
  return result;
}

// mark(kind, unit, pg_key, t_begin): a moment from t_begin (Python's
// time.monotonic_ns) to now. Never raises: it runs in `finally` blocks.
Object* mark(Object*, Object* const* a, ssize_t nargs) {
  if (nargs == 4)
    note({.kind = int(as_int(a[0], -1)),
          .unit = int(as_int(a[1], -1)),
          .pg_key = as_int(a[2], 0),
          .seq_end = -1,
          .flags = 0,
          .t_begin = as_int(a[3], 0),
          .t_end = now_ns()});
  api->IncRef(api->none);
  return api->none;
}

py::MethodDef g_collective{"collective", collective, py::kMethFastCall,
                           "fn(*args, **kwargs), noted as FSDP's collective for a unit"};
py::MethodDef g_mark{"mark", mark, py::kMethFastCall, "an FSDP moment from t_begin to now"};

}  // namespace
}  // namespace ddpscope::inject::fsdp

using namespace ddpscope::inject;

extern "C" {

// (collective, mark), or None where this Python's C API is not found. Called
// once, through ctypes.PyDLL (the GIL held), by fsdp_events.py.
__attribute__((visibility("default"))) py::Object* ddpscope_py_fsdp_builtins(
    py::Object* region_local, py::Object* unnumbered, py::Object* sequence_number,
    py::Object* marker) {
  return hook::make_builtins({&fsdp::g_collective, &fsdp::g_mark}, region_local, unnumbered,
                             sequence_number, marker);
}

}  // extern "C"
