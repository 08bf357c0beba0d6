// One rank's part of the analysis: its DDP all-reduces split into iterations,
// the compute it could hide communication behind, and the figures per
// iteration and per bucket that follow.
#pragma once

#include <map>
#include <vector>

#include "profiler/analysis/intervals.h"
#include "profiler/analysis/iterations.h"
#include "profiler/analysis/run_analysis.h"
#include "profiler/store/reader.h"

namespace ddpscope::analysis {

struct RankView {
  int rank = 0;
  std::vector<Call> ddp;  // all-reduces on the DDP communicator, seq order
  IterationSplit split;
  std::vector<Interval> compute;  // union of compute intervals
  bool compute_from_kernels = false;
};

// Every rank's compute kernels (as stored, not yet unioned), in one pass over
// the table: a per-rank indexed query would seek row by row through millions.
std::map<int, std::vector<Interval>> compute_kernels(store::RunReader& reader);

// On CPU there are no kernels: backward is taken to run from an iteration's
// first bucket launch to its last bucket launch (after that nothing is left to
// hide communication behind).
std::vector<Interval> backward_windows(const RankView& v);

std::vector<IterationStats> iteration_stats(const RankView& v);

// Per bucket index over the steady iterations of every rank.
std::vector<BucketStats> bucket_stats(const std::vector<RankView>& views);

}  // namespace ddpscope::analysis
