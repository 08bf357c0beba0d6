// What `ddpscope tune` prints and writes: the results table, the
// recommendation, --json, -o, and the --dry-run bucket plans.
#pragma once

#include <vector>

#include "cli/tune_flow.h"
#include "tuner/sweep.h"
#include "tuner/workload.h"

namespace ddpscope::cli {

int report_tune(const TuneArgs& a, const tuner::Workload& w,
                const std::vector<tuner::SettingResult>& results);

int write_plans(const TuneArgs& a, const tuner::Workload& w, const std::vector<double>& sizes);

}  // namespace ddpscope::cli
