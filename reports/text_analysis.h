// Terminal tables for the analysis: iterations, buckets, ranks, advice.
#pragma once

#include <ostream>

#include "profiler/analysis/run_analysis.h"

namespace ddpscope::reports {

void print_analysis(const analysis::RunAnalysis& run, std::ostream& out);

}  // namespace ddpscope::reports
