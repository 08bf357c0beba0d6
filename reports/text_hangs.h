// The terminal's account of where a job stopped (hangs) and which ranks
// called different collectives (mismatches): printed first, since a run
// that has them is a run whose other figures matter less.
#pragma once

#include <ostream>

#include "profiler/analysis/run_analysis.h"

namespace ddpscope::reports {

void print_hangs(const analysis::RunAnalysis& run, std::ostream& out);

}  // namespace ddpscope::reports
