// The terminal rendering of a tune sweep: the workload line, the results
// table and the recommendation. Here, beside the tuner, rather than in
// reports/: what it renders are the tuner's own types (SettingResult,
// TuneRecommendation, the model's), and reports/ depends on profiler/ only.
#pragma once

#include <ostream>
#include <vector>

#include "tuner/sweep.h"
#include "tuner/workload.h"

namespace ddpscope::tuner::report {

void print_workload(const Workload& w, std::ostream& out);  // "workload NAME: N gradients, M MiB"
void print_tune_table(const std::vector<SettingResult>& results, std::ostream& out);
void print_tune_recommendation(const TuneRecommendation& rec, std::ostream& out);

}  // namespace ddpscope::tuner::report
