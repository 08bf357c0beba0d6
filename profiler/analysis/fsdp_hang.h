// FSDP's part of a hang (hangs.h): the unit and phase of the collective a
// rank waits in, and of the last one a missing rank completed. The hook notes
// a collective's region when the call returns, so the one a rank is stuck in
// has none; FSDP issues its collectives in the same order every step, so it
// is the one at the same place in the step before, where the calls before it
// in both steps match.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "profiler/analysis/iterations.h"
#include "profiler/analysis/run_analysis.h"
#include "profiler/core/records.h"

namespace ddpscope::analysis {

// `asked`, one of `mine` (a rank's collectives, completed and in flight):
// its unit and phase from the rank's FSDP account, or none where it is not
// FSDP's or the step before does not say.
std::optional<FsdpCallLabel> fsdp_call_label(std::vector<Call> mine, const Call& asked,
                                             std::vector<FsdpRegionRecord> regions,
                                             const std::vector<FsdpInfoRecord>& info);

}  // namespace ddpscope::analysis
