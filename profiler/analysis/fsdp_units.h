// The FSDP analysis: from each rank's classified collectives and FSDP's
// account (fsdp_account.h), the figures per root, unit and phase
// (fsdp_stats.h) and each rank's steps. docs/analysis.md ("FSDP2 units") defines
// them; in short:
//
//  * A step runs from one root pre-forward to the next that follows a
//    backward which reduced gradients (micro-batches accumulated without
//    gradient sync belong to the step they end in). The first is warm-up (FSDP's lazy
//    initialisation, the first all-gathers' set-up) and is left out of every median, as DDP's
//    pre-rebuild iteration is.
//  * Exposed: with compute kernels (a GPU run), the part of a collective no
//    compute kernel covered; without (CPU), the part that ran while the
//    training thread was blocked on it: inside a synchronous call that issued
//    it, inside the unit's wait for its parameters (all-gathers), or after
//    backward ended (reduce-scatters and HSDP all-reduces: their tail).
//  * Slack (all-gathers): the moment the unit needed its parameters minus the
//    all-gather's end. Needed: its wait, or for an all-gather the unit issued
//    itself (not prefetched), the moment it issued it. Negative: late.
#pragma once

#include <map>
#include <span>
#include <vector>

#include "profiler/analysis/fsdp_account.h"
#include "profiler/analysis/intervals.h"
#include "profiler/analysis/run_analysis.h"

namespace ddpscope::analysis {

struct FsdpRankInput {
  int rank = 0;
  std::span<const Call> calls;
  const FsdpRankAccount* account = nullptr;
  const std::vector<Interval>* compute = nullptr;  // compute kernels' union; empty on CPU
};

struct FsdpAnalysis {
  std::vector<FsdpRootStats> roots;
  std::map<int, std::vector<IterationStats>> steps;  // per rank
};

FsdpAnalysis analyze_fsdp(const std::vector<FsdpRankInput>& ranks);

}  // namespace ddpscope::analysis
