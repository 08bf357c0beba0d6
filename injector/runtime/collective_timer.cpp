#include "injector/runtime/collective_timer.h"

namespace ddpscope::inject {

#ifdef DDPSCOPE_HAVE_CUDA
CollectiveTimer* make_cuda_event_timer();  // injector/cuda/event_timer.cpp
#endif

// The factory that keeps CUDA out of every other file (the Kineto way): a
// CPU-only build simply has no device timer.
CollectiveTimer* collective_timer() {
#ifdef DDPSCOPE_HAVE_CUDA
  static CollectiveTimer* timer = make_cuda_event_timer();
  return timer;
#else
  return nullptr;
#endif
}

}  // namespace ddpscope::inject
