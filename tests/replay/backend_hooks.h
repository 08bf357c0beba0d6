// Test hooks the backend files define next to their factories: the host
// memory of a buffer, so a test can all-reduce known data and check the sum.
// Each returns nullptr when `b` is not that backend (NCCL's buffers live on the
// GPU and have no hook). Declare only those your build has (REPLAY_HAVE_*).
#pragma once

#include "tuner/backend.h"

namespace ddpscope::tuner {

float* gloo_buffer_for_testing(Backend& b, int id);
float* mpi_buffer_for_testing(Backend& b, int id);

}  // namespace ddpscope::tuner
