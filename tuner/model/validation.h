// The model against measurement: for every setting measured and predicted on
// the same topology, the iteration time each way and the relative error.
#pragma once

#include <string>
#include <vector>

#include "tuner/sweep.h"

namespace ddpscope::tuner::model {

struct ValidationRow {
  std::string backend;  // the measured backend
  std::string topology;
  double bucket_mb = 0;
  double measured_ms = 0, predicted_ms = 0;
  double error_pct = 0;  // (predicted - measured) / measured, signed
};

struct Validation {
  std::vector<ValidationRow> rows;
  double median_abs_error_pct = 0;
  double max_abs_error_pct = 0;
};

// Pairs every measured result (backend other than "model") with the
// prediction for the same topology, rank count and bucket size.
Validation validate_model(const std::vector<SettingResult>& measured,
                          const std::vector<SettingResult>& predicted);

}  // namespace ddpscope::tuner::model
