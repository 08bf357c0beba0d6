// The small workload the model's fuzz targets (topology, calibration) predict
// over: two parameters of two dtypes, ready in reverse order.
#pragma once

#include "tuner/workload.h"

namespace ddpscope::fuzz {

inline tuner::Workload small_workload() {
  tuner::Workload w;
  w.name = "fuzz";
  w.params = {{"w", 1 << 20, Dtype::float32, 100}, {"b", 1000, Dtype::float16, 10}};
  w.forward_us = 50;
  w.ready_order = {1, 0};
  return w;
}

}  // namespace ddpscope::fuzz
