// The terminal's account of where a job stopped (hangs) and which ranks
// called different collectives (mismatches): the hangs section's text
// (hangs.cpp), which `record --hang-after` prints while the job runs.
#pragma once

#include <ostream>

#include "profiler/analysis/run_analysis.h"

namespace ddpscope::reports {

void print_hangs(const analysis::RunAnalysis& run, std::ostream& out);

}  // namespace ddpscope::reports
