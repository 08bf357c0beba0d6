// What `tune --backend model` prints and writes: the calibration and its
// fit, the model's description, the measured and predicted table, both
// recommendations, and the model-vs-measurement table; the same as JSON.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>

#include "tuner/model/calibration.h"
#include "tuner/model/validation.h"
#include "tuner/model_tune.h"
#include "tuner/sweep_spec.h"

namespace ddpscope::tuner::report {

void print_calibration(const model::Calibration& c, std::ostream& out);
void print_validation(const model::Validation& v, std::ostream& out);
void print_model_tune(const Workload& w, const ModelTune& t, std::ostream& out);

// As the calibration file has the fits (with `points`, the observations),
// and what the model takes from the calibration besides.
nlohmann::json calibration_json(const model::Calibration& c);
nlohmann::json validation_json(const model::Validation& v);
nlohmann::json model_tune_json(const SweepSpec& s, const Workload& w, const ModelTune& t);

}  // namespace ddpscope::tuner::report
