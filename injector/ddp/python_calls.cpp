#include "injector/ddp/python_calls.h"

namespace ddpscope::inject::hook {

const py::Api* api = nullptr;

namespace {

// Set and read under the GIL only.
struct Bound {
  Object* region_local = nullptr;
  Object* unnumbered = nullptr;
  Object* sequence_number = nullptr;
  Object* marker = nullptr;
  Object *stack = nullptr, *group = nullptr, *async_op = nullptr, *get_seq = nullptr;
};
Bound g;

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

}  // namespace

bool bind(const py::Api* p, Object* region_local, Object* unnumbered, Object* sequence_number,
          Object* marker) {
  if (g.region_local) return true;
  api = p;
  g.stack = api->Unicode_InternFromString("stack");
  g.group = api->Unicode_InternFromString("group");
  g.async_op = api->Unicode_InternFromString("async_op");
  g.get_seq = api->Unicode_InternFromString("_get_sequence_number_for_group");
  if (!g.stack || !g.group || !g.async_op || !g.get_seq) return false;
  for (Object* o : {region_local, unnumbered, sequence_number, marker}) api->IncRef(o);
  g.unnumbered = unnumbered, g.sequence_number = sequence_number, g.marker = marker;
  g.region_local = region_local;  // last: bound
  return true;
}

Object* make_builtins(std::initializer_list<py::MethodDef*> defs, Object* region_local,
                      Object* unnumbered, Object* sequence_number, Object* marker) {
  const py::Api* p = py::api();
  if (!p) return nullptr;
  Object* made = bind(p, region_local, unnumbered, sequence_number, marker)
                     ? p->Tuple_New(ssize_t(defs.size()))
                     : nullptr;
  ssize_t i = 0;
  for (py::MethodDef* def : defs) {
    Object* fn = made ? p->CFunction_NewEx(def, nullptr, nullptr) : nullptr;
    if (!fn || p->Tuple_SetItem(made, i++, fn) < 0) {
      if (made) p->DecRef(made);
      made = nullptr;
      break;
    }
  }
  if (!made) p->Err_Clear(), p->IncRef(p->none), made = p->none;
  return made;
}

int64_t as_int(Object* o, int64_t otherwise) {
  long long v = api->Long_AsLongLong(o);
  if (v == -1 && api->Err_Occurred()) return api->Err_Clear(), otherwise;
  return v;
}

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

Object* region_stack() {
  Object* stack = api->Object_GetAttr(g.region_local, g.stack);
  if (!stack || stack != api->none) return stack;
  api->DecRef(stack);
  stack = api->List_New(0);
  if (stack && api->Object_SetAttr(g.region_local, g.stack, stack) < 0)
    api->DecRef(stack), stack = nullptr;
  return stack;
}

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

Object* call_marked(Object* stack, Object* fn, Object* args, Object* kwargs, int64_t (*clock)(),
                    int64_t* t_begin, int64_t* t_end) {
  if (api->List_Append(stack, g.marker) < 0) {
    api->Err_Clear();
    *t_begin = clock();
    Object* result = api->Object_Call(fn, args, kwargs);
    *t_end = clock();
    return result;
  }
  *t_begin = clock();
  Object* result = api->Object_Call(fn, args, kwargs);
  *t_end = clock();
  ssize_t n = api->List_Size(stack);
  if (n > 0) api->List_SetSlice(stack, n - 1, n, nullptr);
  return result;
}

}  // namespace ddpscope::inject::hook
