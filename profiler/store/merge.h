// Merging per-rank files into one run database with every rank on one
// wall-clock timeline. All-or-nothing: the output appears only when complete.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "profiler/core/records.h"

namespace ddpscope::store {

struct MergeSummary {
  int ranks = 0;
  int64_t collectives = 0;
  uint64_t dropped_events = 0;
};

// The rank files (`rank-*.db`) in `dir`, sorted by name. Throws InputError if the
// directory cannot be read.
std::vector<std::string> find_rank_files(const std::string& dir);

// Validates every input (InputError naming the bad file), then writes `out_path`
// through a temporary file renamed into place, with `exits` (how the launcher
// saw each rank end, rank_exits.h) in its rank_exits table.
MergeSummary merge_rank_files(const std::vector<std::string>& inputs, const std::string& out_path,
                              const std::vector<RankExitRecord>& exits = {});

}  // namespace ddpscope::store
