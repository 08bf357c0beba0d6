// A calibration on disk (JSON): the fitted link, its quality, the rate of
// communication under compute, and the measured points it came from, so a
// later `tune --backend model --calibration FILE` predicts without measuring.
#pragma once

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "tuner/model/calibration.h"

namespace ddpscope::tuner::model {

// A missing or malformed file: what() is one line, "<path>: <problem>".
struct CalibrationError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void save_calibration(const std::string& path, const Calibration& c);
Calibration load_calibration(const std::string& path);  // throws CalibrationError

// A fit's per-size ratios as the file has them: [{bytes_per_step, ratio}].
nlohmann::json by_size_json(const SizeCorrection& by_size);

}  // namespace ddpscope::tuner::model
