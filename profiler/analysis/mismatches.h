// Which ranks called different collectives (docs/hangs.md): one sequence
// number on one communicator with another op, dtype or element count on some
// ranks. Point-to-point calls (send, recv) are left out: their numbers do not
// pair ranks up.
#pragma once

#include <vector>

#include "profiler/analysis/run_analysis.h"
#include "profiler/store/reader.h"

namespace ddpscope::analysis {

// From every rank's completed and in-flight collectives (RunReader::call_shapes).
std::vector<Mismatch> find_mismatches(store::RunReader& reader);

}  // namespace ddpscope::analysis
