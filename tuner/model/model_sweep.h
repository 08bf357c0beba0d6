// A sweep predicted instead of measured: for each bucket size, DDP's bucket
// plan, each bucket's modelled all-reduce, the iteration worked out by
// predict_iteration — returned as SettingResults, the shape measured sweeps
// have (one "iteration", the prediction; percentiles equal the median).
#pragma once

#include <vector>

#include "tuner/model/model_backend.h"
#include "tuner/sweep.h"
#include "tuner/workload.h"

namespace ddpscope::tuner::model {

inline constexpr const char* kModelBackendLabel = "model";

std::vector<SettingResult> predict_sweep(const Workload& w, const ModelBackend& m,
                                         const std::vector<double>& bucket_mb,
                                         double first_bucket_mb, double compute_scale = 1.0);

}  // namespace ddpscope::tuner::model
