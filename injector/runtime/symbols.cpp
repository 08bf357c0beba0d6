#include "injector/runtime/symbols.h"

#include <dlfcn.h>
#include <link.h>

#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "injector/runtime/log.h"

namespace ddpscope::inject {
namespace {

bool is_ours(const void* p) {
  Dl_info mine{}, theirs{};
  if (!dladdr(reinterpret_cast<void*>(&is_ours), &mine) || !dladdr(p, &theirs)) return false;
  return mine.dli_fbase == theirs.dli_fbase;
}

void* lookup(void* handle, std::initializer_list<const char*> names) {
  for (const char* n : names) {
    void* p = dlsym(handle, n);
    if (p && !is_ours(p)) return p;
  }
  return nullptr;
}

// The object `path` is already loaded: look the names up in its local scope.
void* lookup_in(const char* path, std::initializer_list<const char*> names) {
  void* h = dlopen(path && *path ? path : nullptr, RTLD_NOLOAD | RTLD_LAZY);
  if (!h) return nullptr;
  void* p = lookup(h, names);
  dlclose(h);  // NOLOAD took a reference; the object stays loaded
  return p;
}

void* in_caller(const void* caller, std::initializer_list<const char*> names) {
  Dl_info info{};
  if (!caller || !dladdr(caller, &info) || is_ours(caller)) return nullptr;
  return lookup_in(info.dli_fname, names);
}

// The loaded objects' paths, in load order. Collected first and searched
// after: dl_iterate_phdr holds the loader's lock, which dlopen may want.
int collect_path(dl_phdr_info* info, size_t, void* data) {
  // The executable (empty name) was searched through RTLD_NEXT already.
  if (info->dlpi_name && *info->dlpi_name)
    static_cast<std::vector<std::string>*>(data)->emplace_back(info->dlpi_name);
  return 0;
}

// Resolutions, appended once per hook on the cold path; read by the writer.
constexpr int kMaxResolutions = 64;
std::mutex g_resolution_mu;
Resolution g_resolutions[kMaxResolutions];
int g_resolution_count = 0;

void remember(const char* symbol, const void* real) {
  Dl_info info{};
  const char* object = dladdr(real, &info) && info.dli_fname ? info.dli_fname : "?";
  std::lock_guard<std::mutex> lock(g_resolution_mu);
  if (g_resolution_count < kMaxResolutions)
    g_resolutions[g_resolution_count++] = {symbol, strdup(object)};
}

}  // namespace

void* find_real(std::initializer_list<const char*> names, std::initializer_list<const char*> libs,
                const void* caller) {
  if (void* p = lookup(RTLD_NEXT, names)) return p;
  if (void* p = in_caller(caller, names)) return p;
  for (const char* soname : libs)
    if (void* p = lookup_in(soname, names)) return p;
  std::vector<std::string> loaded;
  dl_iterate_phdr(collect_path, &loaded);
  for (const auto& path : loaded)
    if (void* p = lookup_in(path.c_str(), names)) return p;
  return nullptr;
}

void* resolve_real(std::atomic<void*>& cache, std::initializer_list<const char*> names,
                   std::initializer_list<const char*> libs, const void* caller,
                   const char* unavailable) {
  const char* symbol = *(names.end() - 1);
  void* p = find_real(names, libs, caller);
  if (!p) {
    notice_once(Notice::no_real_symbol,
                "no loaded object defines %s (the job found our hook by name); the call is "
                "answered as %s",
                symbol, unavailable);
    return nullptr;
  }
  void* expected = nullptr;
  if (cache.compare_exchange_strong(expected, p, std::memory_order_acq_rel)) remember(symbol, p);
  return p;
}

int resolutions(int from, Resolution* out, int max) {
  std::lock_guard<std::mutex> lock(g_resolution_mu);
  int n = 0;
  for (int i = from; i < g_resolution_count && n < max; ++i) out[n++] = g_resolutions[i];
  return n;
}

}  // namespace ddpscope::inject
