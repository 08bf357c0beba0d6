#include "injector/ddp/python_api.h"

#include <dlfcn.h>

#include <type_traits>

namespace ddpscope::inject::py {
namespace {

// Looked up in the process's global scope: the python executable exports
// its C API (extension modules link against it the same way), whether
// libpython is static in it or a shared library it loaded.
Api* load() {
  static Api a;
  bool ok = true;
  auto get = [&](auto& fn, const char* name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(RTLD_DEFAULT, name));
    ok = ok && fn;
  };
  get(a.CFunction_NewEx, "PyCFunction_NewEx");
  get(a.Object_Call, "PyObject_Call");
  get(a.Object_CallObject, "PyObject_CallObject");
  get(a.Object_CallFunctionObjArgs, "PyObject_CallFunctionObjArgs");
  get(a.Object_GetAttr, "PyObject_GetAttr");
  get(a.Object_SetAttr, "PyObject_SetAttr");
  get(a.Object_IsTrue, "PyObject_IsTrue");
  get(a.Unicode_InternFromString, "PyUnicode_InternFromString");
  get(a.Dict_GetItemWithError, "PyDict_GetItemWithError");
  get(a.Tuple_Size, "PyTuple_Size");
  get(a.Tuple_GetItem, "PyTuple_GetItem");
  get(a.Tuple_New, "PyTuple_New");
  get(a.Tuple_SetItem, "PyTuple_SetItem");
  get(a.List_New, "PyList_New");
  get(a.List_Append, "PyList_Append");
  get(a.List_Size, "PyList_Size");
  get(a.List_SetSlice, "PyList_SetSlice");
  get(a.Long_AsLongLong, "PyLong_AsLongLong");
  get(a.Long_FromVoidPtr, "PyLong_FromVoidPtr");
  get(a.Long_FromUnsignedLongLong, "PyLong_FromUnsignedLongLong");
  get(a.Err_Occurred, "PyErr_Occurred");
  get(a.Err_Clear, "PyErr_Clear");
  get(a.Err_SetString, "PyErr_SetString");
  get(a.Err_Fetch, "PyErr_Fetch");
  get(a.Err_Restore, "PyErr_Restore");
  get(a.IncRef, "Py_IncRef");
  get(a.DecRef, "Py_DecRef");
  a.none = static_cast<Object*>(dlsym(RTLD_DEFAULT, "_Py_NoneStruct"));
  // The symbol is a variable holding the exception type.
  auto* type_error = static_cast<Object**>(dlsym(RTLD_DEFAULT, "PyExc_TypeError"));
  a.type_error = type_error ? *type_error : nullptr;
  return ok && a.none && a.type_error ? &a : nullptr;
}

}  // namespace

const Api* api() {
  static const Api* a = load();  // first asked under the GIL: no race
  return a;
}

}  // namespace ddpscope::inject::py
