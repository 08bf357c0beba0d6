#include "injector/runtime/collective_timer.h"

namespace ddpscope::inject {

#ifdef DDPSCOPE_HAVE_CUDA
CollectiveTimer* make_cuda_event_timer();  // injector/cuda/event_timer.cpp
#endif

std::atomic<bool> g_collective_timer_made{false};
CollectiveTimer* g_collective_timer = nullptr;

// The factory that keeps CUDA out of every other file (the Kineto way): a
// CPU-only build simply has no device timer.
CollectiveTimer* make_collective_timer() {
  static CollectiveTimer* timer = [] {
#ifdef DDPSCOPE_HAVE_CUDA
    g_collective_timer = make_cuda_event_timer();
#endif
    g_collective_timer_made.store(true, std::memory_order_release);
    return g_collective_timer;
  }();
  return timer;
}

}  // namespace ddpscope::inject
