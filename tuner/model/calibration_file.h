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

// A fitted link as the file has it: α, β, γ, the fit's quality, by_size.
nlohmann::json link_fit_json(const LinkFit& f);

}  // namespace ddpscope::tuner::model
