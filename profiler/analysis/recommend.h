// Turning figures into advice: each rule fires only on evidence in the run and
// says why, in numbers the user can check in the report.
#pragma once

#include <vector>

#include "profiler/analysis/run_analysis.h"

namespace ddpscope::analysis {

std::vector<Recommendation> recommend(const RunAnalysis& run);

}  // namespace ddpscope::analysis
