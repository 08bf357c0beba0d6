// Terminal tables for the analysis: iterations, buckets, advice, and the
// sections (sections/section.h) in the terminal's order.
#pragma once

#include <ostream>

#include "profiler/analysis/run_analysis.h"

namespace ddpscope::reports {

void print_analysis(const analysis::RunAnalysis& run, std::ostream& out);

}  // namespace ddpscope::reports
