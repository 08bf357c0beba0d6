// DDP's regions and the user's collectives, in C. The start-up hook notes a
// region (native.Region: a DDP forward, a comm-hook bucket, the Join
// context's calls) and every torch.distributed call the job makes outside
// DDP and FSDP (c10d_patches: a loss all-reduced for logging, a metrics
// gather), each once per call or bucket. Through ctypes a user's collective
// took two Python frames and three C calls, each converting its arguments
// and releasing the GIL: 6.6 us of CPU a call in a hot loop, against 1.6 us
// through these builtins (bench/python_hook_overhead.py --user-calls):
//
//   user_call(index, default_group, fn, args, kwargs)
//       fn(*args, **kwargs), the user's collective on its group (`group=`,
//       else args[index], else default_group()), noted as a user region with
//       the group's sequence numbers before and after and its time; the
//       call's own result or exception, unchanged. Inside another region
//       (the thread's region stack not empty: DDP's own calls) it is only
//       the call.
//   region(kind, instance, bucket, pg_key, seq_begin, seq_end, flags,
//          t_begin, t_end)
//       one region, as native.Region notes it on leaving; never raises.
//   now()
//       the capture clock's raw ticks, a region's bounds.
//
// Like FSDP's builtins (fsdp_builtins.cpp) they run no Python frame; the
// c10d wrapper that calls user_call stays Python and checks compiling first,
// so that torch.compile traces through it and never meets the builtin.
#include <cstdint>

#include "injector/ddp/ddp_source.h"
#include "injector/ddp/python_api.h"
#include "injector/ddp/python_calls.h"
#include "profiler/core/records.h"

namespace ddpscope::inject::ddp {
namespace {

using hook::api;
using hook::as_int;
using py::Object;

int64_t ticks() { return int64_t(now()); }

// Python's id(pg), the region's key for its group.
int64_t key_of(Object* pg) { return int64_t(reinterpret_cast<intptr_t>(pg)); }

// As native.Region notes it on leaving: a region that issued nothing is not
// one (no group's count moved), and one that raised is noted still (what it
// issued before the error was issued).
void note_user(Object* pg, int64_t seq_begin, int64_t t_begin, int64_t t_end) {
  int64_t seq_end = hook::sequence_number(pg);
  if (seq_end >= 0 && seq_end == seq_begin) return;
  note({.kind = int(DdpRegionKind::user),
        .instance = -1,
        .bucket = -1,
        .pg_key = key_of(pg),
        .seq_begin = seq_end >= 0 ? seq_begin : -1,
        .seq_end = seq_end,
        .flags = 0,
        .t_begin = uint64_t(t_begin),
        .t_end = uint64_t(t_end)});
}

Object* user_call(Object*, Object* const* a, ssize_t nargs) {
  if (nargs != 5) {
    api->Err_SetString(api->type_error, "user_call() takes 5 arguments");
    return nullptr;
  }
  Object *fn = a[2], *args = a[3], *kwargs = a[4] == api->none ? nullptr : a[4];
  Object* stack = hook::region_stack();
  if (!stack) return api->Err_Clear(), api->Object_Call(fn, args, kwargs);
  Object* pg = nullptr;
  if (!api->Object_IsTrue(stack)) pg = hook::group_of(args, kwargs, as_int(a[0], 1 << 30), a[1]);
  Object* result;
  if (!pg) {
    result = api->Object_Call(fn, args, kwargs);
  } else {
    int64_t seq_begin = hook::sequence_number(pg), t_begin = 0, t_end = 0;
    result = hook::call_marked(stack, fn, args, kwargs, ticks, &t_begin, &t_end);
    Object *type = nullptr, *value = nullptr, *traceback = nullptr;
    if (!result) api->Err_Fetch(&type, &value, &traceback);  // ours must not see it
    note_user(pg, seq_begin, t_begin, t_end);
    if (!result) api->Err_Restore(type, value, traceback);
    api->DecRef(pg);
  }
  api->DecRef(stack);
  return result;
}

Object* region(Object*, Object* const* a, ssize_t nargs) {
  if (nargs == 9)
    note({.kind = int(as_int(a[0], -1)),
          .instance = int(as_int(a[1], -1)),
          .bucket = int(as_int(a[2], -1)),
          .pg_key = as_int(a[3], 0),
          .seq_begin = as_int(a[4], -1),
          .seq_end = as_int(a[5], -1),
          .flags = uint32_t(as_int(a[6], 0)),
          .t_begin = uint64_t(as_int(a[7], 0)),
          .t_end = uint64_t(as_int(a[8], 0))});
  api->IncRef(api->none);
  return api->none;
}

Object* now_builtin(Object*, Object* const*, ssize_t) {
  return api->Long_FromUnsignedLongLong(now());
}

py::MethodDef g_user_call{"user_call", user_call, py::kMethFastCall,
                          "fn(*args, **kwargs), noted as the user's collective"};
py::MethodDef g_region{"region", region, py::kMethFastCall, "one DDP or user region"};
py::MethodDef g_now{"now", now_builtin, py::kMethFastCall, "the capture clock's raw ticks"};

}  // namespace
}  // namespace ddpscope::inject::ddp

using namespace ddpscope::inject;

extern "C" {

// (user_call, region, now), or None where this Python's C API is not found.
// Called once, through ctypes.PyDLL (the GIL held), by native.py, with the
// same objects as FSDP's builtins (python_calls.h: hook::bind).
__attribute__((visibility("default"))) py::Object* ddpscope_py_region_builtins(
    py::Object* region_local, py::Object* unnumbered, py::Object* sequence_number,
    py::Object* marker) {
  return hook::make_builtins({&ddp::g_user_call, &ddp::g_region, &ddp::g_now}, region_local,
                             unnumbered, sequence_number, marker);
}

}  // extern "C"
