// The few CPython functions the hook's builtins use (python_calls.h), found
// at run time in the process, never linked: the injector is preloaded into
// every process of a job, most of them not Python. All are in CPython's stable
// ABI, so one build serves every Python a job runs (3.10 and later). No
// Python.h: the types are opaque pointers and the one struct's layout is the
// stable ABI's.
#pragma once

#include <sys/types.h>

namespace ddpscope::inject::py {

struct Object;  // PyObject: only pointers are passed around
using FastCall = Object* (*)(Object* self, Object* const* args, ssize_t nargs);

// PyMethodDef, as the stable ABI lays it out.
struct MethodDef {
  const char* name;
  FastCall call;
  int flags;
  const char* doc;
};
constexpr int kMethFastCall = 0x0080;  // METH_FASTCALL

struct Api {
  Object* (*CFunction_NewEx)(MethodDef*, Object* self, Object* module);
  Object* (*Object_Call)(Object* callable, Object* args, Object* kwargs);
  Object* (*Object_CallObject)(Object* callable, Object* args);
  Object* (*Object_CallFunctionObjArgs)(Object* callable, ...);
  Object* (*Object_GetAttr)(Object*, Object* name);
  int (*Object_SetAttr)(Object*, Object* name, Object* value);
  int (*Object_IsTrue)(Object*);
  Object* (*Unicode_InternFromString)(const char*);
  Object* (*Dict_GetItemWithError)(Object* dict, Object* key);  // borrowed
  ssize_t (*Tuple_Size)(Object*);
  Object* (*Tuple_GetItem)(Object*, ssize_t);  // borrowed
  Object* (*Tuple_New)(ssize_t);
  int (*Tuple_SetItem)(Object*, ssize_t, Object*);  // steals the item
  Object* (*List_New)(ssize_t);
  int (*List_Append)(Object*, Object*);
  ssize_t (*List_Size)(Object*);
  int (*List_SetSlice)(Object*, ssize_t, ssize_t, Object*);
  long long (*Long_AsLongLong)(Object*);
  Object* (*Long_FromVoidPtr)(void*);
  Object* (*Long_FromUnsignedLongLong)(unsigned long long);
  Object* (*Err_Occurred)();
  void (*Err_Clear)();
  void (*Err_SetString)(Object* type, const char*);
  void (*Err_Fetch)(Object** type, Object** value, Object** traceback);
  void (*Err_Restore)(Object* type, Object* value, Object* traceback);
  void (*IncRef)(Object*);
  void (*DecRef)(Object*);
  Object* none;        // Py_None
  Object* type_error;  // PyExc_TypeError
};

// The process's Python, or null where it has none (or lacks one of these).
// Call with the GIL held.
const Api* api();

}  // namespace ddpscope::inject::py
