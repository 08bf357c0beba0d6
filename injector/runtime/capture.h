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

#define DDPSCOPE_TLS __attribute__((tls_model("initial-exec")))

namespace ddpscope::inject {

enum class State : int { not_started, starting, running, finalized, disabled };

extern std::atomic<int> g_state;
extern thread_local ThreadBuffer* tl_buffer DDPSCOPE_TLS;
extern thread_local int tl_depth DDPSCOPE_TLS;
extern thread_local uint32_t tl_tid DDPSCOPE_TLS;

// Recording is on for this call: running, and not inside one of our own calls.
inline bool capturing() {
  return g_state.load(std::memory_order_relaxed) <= int(State::running) && tl_depth == 0;
}

// Our own calls into the job's libraries (and hooks nested in hooks, e.g. Gloo
// calling itself through its PLT) are not recorded.
struct ReentrancyGuard {
  ReentrancyGuard() { ++tl_depth; }
  ~ReentrancyGuard() { --tl_depth; }
  ReentrancyGuard(const ReentrancyGuard&) = delete;
  ReentrancyGuard& operator=(const ReentrancyGuard&) = delete;
};

// First event of a thread: start the runtime if needed, then register a buffer.
ThreadBuffer* attach_thread();

// A slot for one event, or null (ring full: counted as dropped; or no runtime).
// Communication events (EventClass::comm) have a reserve no other kind can
// take (thread_buffer.h).
inline Event* reserve_event(EventClass c = EventClass::other) {
  ThreadBuffer* b = tl_buffer;
  if (!b) b = attach_thread();
  return b ? b->reserve(c) : nullptr;
}
inline void publish_event() { tl_buffer->publish(); }

// The body of a fresh event from `source` (source.h), or null as above.
template <typename Body>
inline Body* reserve_event_body(SourceId source, uint8_t kind, EventClass c = EventClass::other) {
  Event* e = reserve_event(c);
  if (!e) return nullptr;
  e->source = source;
  e->kind = kind;
  return &e->as<Body>();
}

inline uint32_t thread_id() {
  if (!tl_buffer) attach_thread();
  return tl_tid;
}

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
