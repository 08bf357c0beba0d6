// Finding the real function behind a hook, from the caller's side.
//
// A call reaches a hook because the dynamic linker bound the caller to our
// export, the first definition in the global scope. Without us it would have
// bound to the next definition in the global scope (dlsym(RTLD_NEXT)) or, for
// a caller loaded RTLD_LOCAL (Python extensions: torch, and the NCCL, Gloo and
// libcudart it pulls in), to the one in the caller's own local scope. So the
// search is: RTLD_NEXT; the caller's object and its dependencies; the
// library's sonames; then every loaded object, in load order. It names no
// path: Gloo lives in libgloo.so.0 under Debian's torch and inside
// libtorch_cpu.so in PyPI's wheels, NCCL in a wheel's nvidia/nccl/lib.
//
// Nothing defines the function only where the job looked it up by name
// (dlsym(RTLD_DEFAULT, ...), a weak reference) and found our export, where
// without us it would have found nothing: a bound call cannot get here, since
// without a definition the dynamic linker would not have started the job. The
// hook then answers as the library does when it cannot start (CUDA:
// cudaErrorInitializationError; NCCL: ncclSystemError; Gloo: an exception),
// with one notice. It never skips a call it could pass on. NCCL's strong
// pnccl* symbols are preferred where they exist.
#pragma once

#include <atomic>
#include <initializer_list>

namespace ddpscope::inject {

// `names`: symbol names to try in order (e.g. {"pncclAllReduce", "ncclAllReduce"});
// `libs`: sonames to try; `caller`: a return address inside the calling object
// (null: unknown). Returns null when nothing but our own hook is found.
void* find_real(std::initializer_list<const char*> names, std::initializer_list<const char*> libs,
                const void* caller);

// A hook's real function, found once: the hot path is one load and a
// predicted branch; the search runs out of line the first time only. Null
// (with one notice naming `unavailable`, the answer the hook gives) when no
// loaded object defines it; the search is then repeated at the next call.
[[gnu::noinline, gnu::cold]] void* resolve_real(std::atomic<void*>& cache,
                                                std::initializer_list<const char*> names,
                                                std::initializer_list<const char*> libs,
                                                const void* caller, const char* unavailable);
template <typename Fn, typename Resolve>
[[gnu::always_inline]] inline Fn cached_real(std::atomic<void*>& cache, Resolve&& resolve) {
  void* p = cache.load(std::memory_order_acquire);
  if (__builtin_expect(!p, 0)) p = resolve();
  return reinterpret_cast<Fn>(p);
}

// The hook's caller, to be evaluated in the hook itself (not in a helper).
#define DDPSCOPE_CALLER() __builtin_extract_return_addr(__builtin_return_address(0))

// Which object each resolved hook forwards to, in resolution order: the rank
// file stores them (meta `real:<symbol>`) so a run says where its calls went.
struct Resolution {
  const char* symbol;
  const char* object;
};
// Copies up to `max` resolutions from index `from` on; returns how many.
int resolutions(int from, Resolution* out, int max);

}  // namespace ddpscope::inject
