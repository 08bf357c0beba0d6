// A calibration fit measured in passes: per bucket size, one time from
// what every pass measured (calibrate.cpp measures the one-node fits so).
#pragma once

#include <vector>

#include "tuner/sweep.h"

namespace ddpscope::tuner {

// Where the passes' medians differ by more than this, the slowest pass's
// median is kept: on this shared machine small all-reduces on one node have
// two states (64 MiB of 0.25 MiB all-reduces on 4 ranks in 0.35-0.42 s in
// some calibrations, 1.5-1.6 s in the others and in the state every sweep
// met, docs/model.md), and a prediction for a training job should not count
// on a lull.
constexpr double kFitStateRatio = 1.5;

struct PooledComm {
  double ms = 0;               // the all-reduce time kept for the size
  double fastest_pass_ms = 0;  // the passes' medians, fastest
  double slowest_pass_ms = 0;  //   and slowest
  bool states_differ = false;  // slowest > kFitStateRatio × fastest: ms is the slowest
};

// One size's settings, one per pass (none empty): the median comm time over
// every iteration of every pass. A pass slowed for seconds by something
// else on the machine moves it by a few samples, where a size measured once
// would take that pass's median whole.
PooledComm pool_passes(const std::vector<const SettingResult*>& passes);

}  // namespace ddpscope::tuner
