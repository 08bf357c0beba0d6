// What `ddpscope tune` prints and writes: the results table, the
// recommendation, --json, -o, and the --dry-run bucket plans.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <vector>

#include "cli/tune_flow.h"
#include "tuner/sweep.h"
#include "tuner/workload.h"

namespace ddpscope::cli {

int report_tune(const TuneArgs& a, const tuner::Workload& w,
                const std::vector<tuner::SettingResult>& results);

// The pieces of report_tune, for reports that add to it (cli/tune_model.cpp).
void print_tune_table(const std::vector<tuner::SettingResult>& results, std::ostream& out);
void print_tune_recommendation(const tuner::TuneRecommendation& rec, std::ostream& out);
nlohmann::json tune_json(const TuneArgs& a, const tuner::Workload& w,
                         const std::vector<tuner::SettingResult>& results,
                         const tuner::TuneRecommendation& rec);
void store_tune_results(const TuneArgs& a, const tuner::Workload& w,
                        const std::vector<tuner::SettingResult>& results,
                        const nlohmann::json& recommendation);

int write_plans(const TuneArgs& a, const tuner::Workload& w, const std::vector<double>& sizes);

}  // namespace ddpscope::cli
