// The DDP iteration, predicted: the replay engine's schedule (tuner/replay.cpp)
// worked out on paper instead of run. Forward; backward compute per gradient
// in ready order; bucket k's all-reduce starts once its last gradient is
// ready and bucket k-1's all-reduce has finished (DDP launches in bucket
// order and one comm stream runs them one at a time); after backward, wait
// for every bucket; then the optimizer.
#pragma once

#include <vector>

#include "tuner/bucket_plan.h"
#include "tuner/workload.h"

namespace ddpscope::tuner::model {

struct BucketTiming {
  double ready_ms = 0;  // launched: its last gradient ready, and its predecessor launched
  double start_ms = 0;  // running: launched and the comm stream free
  double end_ms = 0;
};

struct IterationPrediction {
  double iter_ms = 0;     // forward start to optimizer end
  double comm_ms = 0;     // first bucket start to last bucket end
  double exposed_ms = 0;  // backward end to last bucket end (0 if all hidden)
  double backward_end_ms = 0;
  std::vector<BucketTiming> buckets;  // in DDP order, times from forward start
};

// How compute and communication interfere on the rank (1 and 0: not at all,
// as on a GPU whose NCCL kernels have SMs of their own). On a CPU whose cores
// all compute, the backend's threads (and anything else on the machine) take
// turns with the compute thread: communication progresses slower, and a
// compute step that ends while another thread has the core ends late.
struct IterationModelOptions {
  double compute_scale = 1.0;  // as ReplayOptions::compute_scale
  // Communication progresses at this fraction of its stand-alone speed while
  // the rank computes, at full speed once it waits.
  double comm_rate_during_compute = 1.0;
  // Every compute interval (forward, each backward step, optimizer) ends
  // this much later than its compute: the compute thread notices the end
  // only when it next runs. A backward step that starts while an all-reduce
  // is in flight ends later still: the backend's threads want the core too.
  double step_delay_ms = 0;
  double step_delay_under_comm_ms = 0;
  // The step length the delays were measured at (0: they apply to any
  // interval whole): an interval shorter than it gets them in proportion.
  double step_delay_step_us = 0;
};

// `bucket_comm_ms[k]`: bucket k's all-reduce on its own (nothing else
// running). Throws std::invalid_argument for a plan that does not fit the
// workload (as replay() does).
IterationPrediction predict_iteration(const Workload& w, const BucketPlan& plan,
                                      const std::vector<double>& bucket_comm_ms,
                                      const IterationModelOptions& options = {});

}  // namespace ddpscope::tuner::model
