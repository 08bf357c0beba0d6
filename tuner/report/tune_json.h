// `tune --json`: results, recommendation and the --dry-run bucket plans
// (docs/tuner.md has the fields).
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "tuner/sweep.h"
#include "tuner/sweep_spec.h"
#include "tuner/workload.h"

namespace ddpscope::tuner::report {

nlohmann::json recommendation_json(const TuneRecommendation& rec);
nlohmann::json tune_json(const SweepSpec& s, const Workload& w,
                         const std::vector<SettingResult>& results, const TuneRecommendation& rec);
// DDP's bucket plan of `w` at each of s.bucket_mb.
nlohmann::json plans_json(const SweepSpec& s, const Workload& w);

}  // namespace ddpscope::tuner::report
