// Merging per-rank files into one run database with every rank on one
// wall-clock timeline. All-or-nothing: the output appears only when complete.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "profiler/store/launch_account.h"

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
// through a temporary file renamed into place, with what `record` knew beside
// the rank files (launch_account.h) in its rank_exits and stacks tables.
MergeSummary merge_rank_files(const std::vector<std::string>& inputs, const std::string& out_path,
                              const LaunchAccount& launch = {});

}  // namespace ddpscope::store
