// The replay engine, per rank: forward, then backward as compute intervals
// (CPU: busy-wait the stated time), each bucket's all-reduce started
// asynchronously as soon as its last gradient is ready, in DDP order, then wait
// for all, then the optimizer. Warm-up iterations, then measured ones.
#pragma once

#include <vector>

#include "tuner/backend.h"
#include "tuner/bucket_plan.h"

namespace ddpscope::tuner {

struct IterationSample {
  double iter_ms = 0;     // forward start to optimizer end
  double comm_ms = 0;     // first bucket start to last bucket end
  double exposed_ms = 0;  // backward end to last bucket end (0 if all hidden)
};

struct ReplayOptions {
  int warmup = 3;
  int iters = 10;
  double compute_scale = 1.0;  // multiply every compute time (sweeps at other speeds)
};

// Runs on every rank of `backend` together; returns this rank's measured iterations.
std::vector<IterationSample> replay(const Workload& w, const BucketPlan& plan, Backend& backend,
                                    const ReplayOptions& options);

// Busy-waits `us` microseconds on the calling thread (CPU compute stand-in).
void spin_for_us(double us);

}  // namespace ddpscope::tuner
