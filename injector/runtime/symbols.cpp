#include "injector/runtime/symbols.h"

#include <dlfcn.h>
#include <link.h>

#include <cstring>
#include <string>

#include "injector/runtime/log.h"

namespace ddpscope::inject {
namespace {

bool is_ours(void* p) {
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

struct PathSearch {
  std::string stem;
  std::string found;
};

int match_path(dl_phdr_info* info, size_t, void* data) {
  auto* s = static_cast<PathSearch*>(data);
  if (info->dlpi_name && strstr(info->dlpi_name, s->stem.c_str())) {
    s->found = info->dlpi_name;
    return 1;
  }
  return 0;
}

}  // namespace

void* find_real(std::initializer_list<const char*> names, std::initializer_list<const char*> libs) {
  if (void* p = lookup(RTLD_NEXT, names)) return p;
  for (const char* soname : libs) {
    if (void* h = dlopen(soname, RTLD_NOLOAD | RTLD_LAZY)) {
      void* p = lookup(h, names);
      dlclose(h);  // NOLOAD took a reference; the library stays loaded
      if (p) return p;
    }
  }
  if (libs.size() == 0) return nullptr;
  // Loaded by a path under a name we did not guess (e.g. a pip wheel's copy).
  std::string stem = *libs.begin();
  stem = stem.substr(0, stem.find(".so"));
  PathSearch search{stem, {}};
  dl_iterate_phdr(match_path, &search);
  if (search.found.empty()) return nullptr;
  void* h = dlopen(search.found.c_str(), RTLD_NOLOAD | RTLD_LAZY);
  if (!h) return nullptr;
  void* p = lookup(h, names);
  dlclose(h);
  return p;
}

void* resolve_real(std::atomic<void*>& cache, std::initializer_list<const char*> names,
                   std::initializer_list<const char*> libs, const char* missing_note) {
  void* p = find_real(names, libs);
  if (!p)
    notice_once(Notice::no_real_symbol, "cannot find the real %s%s; the call fails",
                *(names.end() - 1), missing_note);
  cache.store(p, std::memory_order_release);
  return p;
}

}  // namespace ddpscope::inject
