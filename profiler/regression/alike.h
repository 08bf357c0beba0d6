// Only like is compared with like: the runs of both sides are grouped by kind
// (recorded run, tuner results), and every run of a kind must identify the same
// job (world size, backend and gradient bytes; or the tuned workload) as the
// first baseline run of that kind. A mismatch is bad input, not a regression.
#pragma once

#include <string>
#include <vector>

#include "profiler/regression/metrics.h"

namespace ddpscope::regression {

struct Pairing {
  std::string kind;
  std::vector<const RunMetrics*> baseline, candidate;
};

struct Pairings {
  std::vector<Pairing> alike;         // kinds both sides have
  std::vector<std::string> unpaired;  // "tuner results only in the baseline"
};

// Throws InputError (one line naming both files and the field) on a mismatch,
// or when the sides have no kind in common.
Pairings pair_alike(const std::vector<RunMetrics>& baseline,
                    const std::vector<RunMetrics>& candidate);

}  // namespace ddpscope::regression
