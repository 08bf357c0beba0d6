// Finding the real function behind a hook. dlsym(RTLD_NEXT) alone is not
// enough: Python loads extension libraries RTLD_LOCAL, so NCCL and Gloo pulled
// in by torch are invisible to it (a naive Gloo hook segfaults under Debian's
// torch for exactly this reason). Order: RTLD_NEXT, then dlopen(soname,
// RTLD_NOLOAD), then any loaded object whose path names the library. NCCL's
// strong pnccl* symbols are preferred where they exist.
#pragma once

#include <atomic>
#include <initializer_list>

namespace ddpscope::inject {

// `names`: symbol names to try in order (e.g. {"pncclAllReduce", "ncclAllReduce"});
// `libs`: sonames, the first of which also serves as the path stem to look for.
// Returns null when nothing but our own hook is found.
void* find_real(std::initializer_list<const char*> names, std::initializer_list<const char*> libs);

// A hook's real function, found once: the hot path is one load and a
// predicted branch; the search (find_real, and one notice naming the last of
// `names` when nothing is found) runs out of line the first time only.
[[gnu::noinline, gnu::cold]] void* resolve_real(std::atomic<void*>& cache,
                                                std::initializer_list<const char*> names,
                                                std::initializer_list<const char*> libs,
                                                const char* missing_note);
template <typename Fn, typename Resolve>
[[gnu::always_inline]] inline Fn cached_real(std::atomic<void*>& cache, Resolve&& resolve) {
  void* p = cache.load(std::memory_order_acquire);
  if (__builtin_expect(!p, 0)) p = resolve();
  return reinterpret_cast<Fn>(p);
}

}  // namespace ddpscope::inject
