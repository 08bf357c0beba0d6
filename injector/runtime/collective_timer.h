// Device-side timing of collectives, behind one small interface so that the
// runtime and the NCCL hooks never include a CUDA header. The CUDA-event
// implementation (injector/cuda/) is compiled only where the toolkit is found
// and used only where the job itself loaded the CUDA driver.
#pragma once

#include <atomic>
#include <cstdint>

namespace ddpscope::inject {

struct TimerReading {
  enum class State { pending, done, failed } state = State::pending;
  int64_t start_ns = 0, end_ns = 0;  // CLOCK_MONOTONIC
};

class CollectiveTimer {
 public:
  virtual ~CollectiveTimer() = default;
  // Hot path (app threads): mark the start of work on `stream`; returns a slot
  // or UINT32_MAX when no slot is free (the call is then host-timed).
  virtual uint32_t begin(void* stream) = 0;
  // Hot path: mark the end; `uses` events will read this slot, and each
  // release it once (a hook whose event never made it to the ring too).
  virtual void end(uint32_t slot, void* stream, int uses) = 0;
  // Hot path: `stream` is being captured into a CUDA graph, so work issued on
  // it now only runs at the graph's launches.
  virtual bool capturing(void* stream) = 0;
  // Writer thread: never blocks on the app's streams. Pending while the work
  // runs; failed when the driver cannot time it.
  virtual TimerReading poll(uint32_t slot) = 0;
  virtual void release(uint32_t slot) = 0;
  // Writer thread, once per flush before polling: refresh GPU/host clock anchors.
  virtual void sync_clocks() = 0;
};

// The process's timer, or null when device timing is unavailable. Made at the
// first call (once the job has loaded the CUDA driver); after that, one load
// on the hot path.
CollectiveTimer* make_collective_timer();
extern std::atomic<bool> g_collective_timer_made;
extern CollectiveTimer* g_collective_timer;

inline CollectiveTimer* collective_timer() {
  if (g_collective_timer_made.load(std::memory_order_acquire)) return g_collective_timer;
  return make_collective_timer();
}

}  // namespace ddpscope::inject
