// A calibration on disk (JSON): the fitted link, its quality, the rate of
// communication under compute, and the measured points it came from, so a
// later `tune --backend model --calibration FILE` predicts without measuring.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "profiler/core/input_error.h"
#include "tuner/model/calibration.h"

namespace ddpscope::tuner::model {

void save_calibration(const std::string& path, const Calibration& c);
// A missing or malformed file throws InputError: "<path>: <problem>".
Calibration load_calibration(const std::string& path);
// The same from the file's text (`path` names it in messages).
Calibration calibration_from_json_text(const std::string& path, const std::string& text);

// A fitted link as the file has it: α, β, γ, the fit's quality, by_size.
nlohmann::json link_fit_json(const LinkFit& f);

}  // namespace ddpscope::tuner::model
