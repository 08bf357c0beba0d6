// `tune -o DB`: a sweep's results in the run database's tune tables
// (profiler/store/tune_store.h), appended to an existing tune database.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tuner/sweep.h"
#include "tuner/sweep_spec.h"
#include "tuner/workload.h"

namespace ddpscope::tuner {

// `command_line` says how the sweep was asked for; `recommendation` is the
// JSON object `tune --json` has under that name.
void save_tune_run(const std::string& db, const SweepSpec& s, const Workload& w,
                   const std::vector<SettingResult>& results, const nlohmann::json& recommendation,
                   const std::string& command_line);

}  // namespace ddpscope::tuner
