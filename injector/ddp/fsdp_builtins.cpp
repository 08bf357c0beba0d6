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
#include "profiler/core/records.h"

namespace ddpscope::inject::fsdp {
namespace {

using py::Object;

// What the hook hands over once (fsdp_events.py), and interned names. Set
// and read under the GIL only.
struct Bound {
  Object* region_local;     // native._local: .stack, the thread's open regions
  Object* unnumbered;       // native.unnumbered: id(pg) -> weakref, groups without numbers
  Object* sequence_number;  // native.sequence_number(pg): the slow, remembering way
  Object* in_call_marker;   // on the region stack while FSDP's collective runs
  Object *stack, *group, *async_op, *get_seq;
};
Bound g;
const py::Api* api = nullptr;

int64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);  // Python's time.monotonic_ns, the marks' clock
  return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// o's integer value, or `otherwise` (no exception left behind).
int64_t as_int(Object* o, int64_t otherwise) {
  long long v = api->Long_AsLongLong(o);
  if (v == -1 && api->Err_Occurred()) return api->Err_Clear(), otherwise;
  return v;
}

// True for a group torch keeps no numbers for (native.sequence_number's
// dictionary, checked inline: asking such a group costs a C++ exception).
bool unnumbered(Object* pg) {
  Object* key = api->Long_FromVoidPtr(pg);
  Object* ref = key ? api->Dict_GetItemWithError(g.unnumbered, key) : nullptr;
  api->DecRef(key);
  if (!ref) return api->Err_Clear(), false;
  Object* target = api->Object_CallObject(ref, nullptr);
  if (!target) return api->Err_Clear(), false;
  api->DecRef(target);
  return target == pg;
}

// The group's collective count now, or -1.
int64_t sequence_number(Object* pg) {
  if (unnumbered(pg)) return -1;
  Object* method = api->Object_GetAttr(pg, g.get_seq);
  Object* n = method ? api->Object_CallObject(method, nullptr) : nullptr;
  if (method) api->DecRef(method);
  if (!n) {
    api->Err_Clear();
    n = api->Object_CallFunctionObjArgs(g.sequence_number, pg, nullptr);
    if (!n) return api->Err_Clear(), -1;
  }
  int64_t seq = as_int(n, -1);
  api->DecRef(n);
  return seq;
}

// The thread's region stack (made when it has none), as a new reference.
Object* region_stack() {
  Object* stack = api->Object_GetAttr(g.region_local, g.stack);
  if (!stack || stack != api->none) return stack;
  api->DecRef(stack);
  stack = api->List_New(0);
  if (stack && api->Object_SetAttr(g.region_local, g.stack, stack) < 0)
    api->DecRef(stack), stack = nullptr;
  return stack;
}

// The collective's group: `group=` if given (even None), else its place
// among the positional arguments; None there means the default group.
Object* group_of(Object* args, Object* kwargs, ssize_t index, Object* default_group) {
  Object* group = kwargs ? api->Dict_GetItemWithError(kwargs, g.group) : nullptr;
  if (!group && index < api->Tuple_Size(args)) group = api->Tuple_GetItem(args, index);
  api->Err_Clear();
  if (group && group != api->none) return api->IncRef(group), group;
  Object* d = api->Object_CallObject(default_group, nullptr);
  if (d == api->none) api->DecRef(d), d = nullptr;
  if (!d) api->Err_Clear();
  return d;
}

bool async_op(Object* kwargs) {
  Object* v = kwargs ? api->Dict_GetItemWithError(kwargs, g.async_op) : nullptr;
  if (!v) return api->Err_Clear(), false;
  int yes = api->Object_IsTrue(v);
  if (yes < 0) api->Err_Clear();
  return yes > 0;
}

// fn(*args, **kwargs), noted as the unit's collective: the caller's region
// stack holds the marker meanwhile, so that the collectives torch calls
// inside it (an alias calling its new name) stay this one.
Object* noted_call(const Region& what, Object* stack, Object* pg, Object* fn, Object* args,
                   Object* kwargs) {
  Region r = what;
  // Not noted rather than not called: the job's call is never lost to ours.
  if (api->List_Append(stack, g.in_call_marker) < 0)
    return api->Err_Clear(), api->Object_Call(fn, args, kwargs);
  r.t_begin = now_ns();
  Object* result = api->Object_Call(fn, args, kwargs);
  r.t_end = now_ns();
  // A call that raised may have numbered none: no collective named.
  r.seq_end = result ? sequence_number(pg) : -1;
  if (!result) r.flags = 0;
  ssize_t n = api->List_Size(stack);
  if (n > 0) api->List_SetSlice(stack, n - 1, n, nullptr);
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
  Object* stack = region_stack();
  if (!stack) return api->Err_Clear(), api->Object_Call(fn, args, kwargs);
  Object* pg = nullptr;
  if (!api->Object_IsTrue(stack)) pg = group_of(args, kwargs, as_int(a[2], 1 << 30), a[3]);
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
                      (async_op(kwargs) ? uint32_t(kFsdpAsync) : 0u),
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

bool bind(Object* region_local, Object* unnumbered, Object* sequence_number, Object* marker) {
  g.stack = api->Unicode_InternFromString("stack");
  g.group = api->Unicode_InternFromString("group");
  g.async_op = api->Unicode_InternFromString("async_op");
  g.get_seq = api->Unicode_InternFromString("_get_sequence_number_for_group");
  if (!g.stack || !g.group || !g.async_op || !g.get_seq) return false;
  for (Object* o : {region_local, unnumbered, sequence_number, marker}) api->IncRef(o);
  g.region_local = region_local, g.unnumbered = unnumbered;
  g.sequence_number = sequence_number, g.in_call_marker = marker;
  return true;
}

}  // namespace
}  // namespace ddpscope::inject::fsdp

using namespace ddpscope::inject;

extern "C" {

// (collective, mark), or None where this Python's C API is not found. Called
// once, through ctypes.PyDLL (the GIL held), by fsdp_events.py.
__attribute__((visibility("default"))) py::Object* ddpscope_py_fsdp_builtins(
    py::Object* region_local, py::Object* unnumbered, py::Object* sequence_number,
    py::Object* marker) {
  const py::Api* p = py::api();
  if (!p) return nullptr;  // ctypes: "PyObject is NULL", caught by the hook
  fsdp::api = p;
  py::Object* pair = nullptr;
  if (fsdp::bind(region_local, unnumbered, sequence_number, marker)) {
    py::Object* c = p->CFunction_NewEx(&fsdp::g_collective, nullptr, nullptr);
    py::Object* m = p->CFunction_NewEx(&fsdp::g_mark, nullptr, nullptr);
    if (c && m) pair = p->Tuple_Pack(2, c, m);
    if (c) p->DecRef(c);
    if (m) p->DecRef(m);
  }
  if (!pair) p->Err_Clear(), p->IncRef(p->none), pair = p->none;
  return pair;
}

}  // extern "C"
