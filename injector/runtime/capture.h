// The capture runtime every hook goes through. States: not started (library
// loaded, nothing recorded yet), starting (one thread is starting it), running,
// finalized (after exit began, or in a child forked from a running process),
// disabled (no usable output). Hooks check one relaxed atomic and a
// thread-local depth, then write one event into their thread's ring;
// everything slow happens on the writer thread.
#pragma once

#include <atomic>
#include <cstdint>

#include "injector/runtime/event.h"
#include "injector/runtime/thread_buffer.h"

// Our thread-locals: hidden, so that each function finds them from our
// module's base (local-dynamic), through TLS descriptors (-mtls-dialect=gnu2,
// injector/CMakeLists.txt). Not initial-exec: that model needs room in glibc's
// static TLS block, which a library dlopen()ed late (NVTX loads ours from
// NVTX_INJECTION64_PATH when it was not preloaded) may not find once other
// libraries have used it up ("cannot allocate memory in static TLS block").
// Preloaded, our block is static anyway and a descriptor resolves to a
// constant offset: one indirect call per address taken, which is why a
// thread's state is one object, and hot paths take its address once
// (this_thread()) and pass it on.
#define DDPSCOPE_TLS __attribute__((visibility("hidden")))

namespace ddpscope::inject {

enum class State : int { not_started, starting, running, finalized, disabled };

extern std::atomic<int> g_state;

// One thread's recording state.
struct ThreadState {
  ThreadBuffer* buffer = nullptr;  // its ring, once attached
  int depth = 0;                   // our own calls nested (ReentrancyGuard)
  uint32_t tid = 0;                // its kernel thread id, once attached
};
extern thread_local ThreadState tl_thread DDPSCOPE_TLS;

inline ThreadState& this_thread() { return tl_thread; }

// Recording is on for this call: running, and not inside one of our own calls.
inline bool capturing(const ThreadState& t) {
  return g_state.load(std::memory_order_relaxed) <= int(State::running) && t.depth == 0;
}
inline bool capturing() { return capturing(this_thread()); }

// Our own calls into the job's libraries (and hooks nested in hooks, e.g. Gloo
// calling itself through its PLT) are not recorded.
struct ReentrancyGuard {
  explicit ReentrancyGuard(ThreadState& t = this_thread()) : t_(t) { ++t_.depth; }
  ~ReentrancyGuard() { --t_.depth; }
  ReentrancyGuard(const ReentrancyGuard&) = delete;
  ReentrancyGuard& operator=(const ReentrancyGuard&) = delete;

 private:
  ThreadState& t_;
};

// First event of a thread: start the runtime if needed, then register a buffer.
ThreadBuffer* attach_thread();

// A slot for one event, or null (ring full: counted as dropped; or no runtime).
// Communication events (EventClass::comm) have a reserve no other kind can
// take (thread_buffer.h).
inline Event* reserve_event(ThreadState& t, EventClass c = EventClass::other) {
  ThreadBuffer* b = t.buffer;
  if (!b) b = attach_thread();
  return b ? b->reserve(c) : nullptr;
}
inline Event* reserve_event(EventClass c = EventClass::other) {
  return reserve_event(this_thread(), c);
}
inline void publish_event(ThreadState& t) { t.buffer->publish(); }
inline void publish_event() { publish_event(this_thread()); }

// The body of a fresh event from `source` (source.h), or null as above.
template <typename Body>
inline Body* reserve_event_body(ThreadState& t, SourceId source, uint8_t kind,
                                EventClass c = EventClass::other) {
  Event* e = reserve_event(t, c);
  if (!e) return nullptr;
  e->source = source;
  e->kind = kind;
  return &e->as<Body>();
}
template <typename Body>
inline Body* reserve_event_body(SourceId source, uint8_t kind, EventClass c = EventClass::other) {
  return reserve_event_body<Body>(this_thread(), source, kind, c);
}

inline uint32_t thread_id(ThreadState& t) {
  if (!t.buffer) attach_thread();
  return t.tid;
}
inline uint32_t thread_id() { return thread_id(this_thread()); }

// Where this process came from, when it was forked before recording started
// in its parent (its runtime starts afresh; see is_helper_of_parent in
// identity.h for when it records).
struct ForkOrigin {
  bool before_start = false;  // forked while the parent's runtime was not started
  int parent_rank = -1;       // the rank the parent's environment named at the fork
};
const ForkOrigin& fork_origin();

// Flush everything and close the rank file. Safe to call twice, from exit
// handlers, and in a forked child (where it does nothing).
void finalize();

// For tests and benchmarks: how many events were dropped so far.
uint64_t dropped_events();

}  // namespace ddpscope::inject
