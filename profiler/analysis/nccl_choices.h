// What NCCL chose for each collective (algorithm, protocol, channels) and how
// long its kernel and its network part took, from NCCL's profiler plugin rows
// the merge joined to `collectives` (docs/nccl_plugin.md). Empty for runs
// without the plugin: every figure here is then absent, never guessed.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "profiler/analysis/iterations.h"
#include "profiler/analysis/run_analysis.h"
#include "profiler/store/reader.h"

namespace ddpscope::analysis {

struct NcclChoice {
  std::string algo, proto;  // NCCL's names: "RING", "SIMPLE"
  int nchannels = 0;
  double kernel_us = -1;   // first channel start to last channel stop, GPU timer; -1: none reported
  double network_us = -1;  // union of its proxy steps' network waits; -1: no network part
};

// By collectives.id.
using NcclChoices = std::unordered_map<int64_t, NcclChoice>;

NcclChoices nccl_choices(store::RunReader& reader);

// "RING/SIMPLE x8": how reports name a choice.
std::string choice_label(const NcclChoice& c);

// Per (op, bytes, nranks, algorithm, protocol, channels), by size.
std::vector<NcclChoiceStats> nccl_choice_stats(const std::vector<Call>& calls,
                                               const NcclChoices& choices);

}  // namespace ddpscope::analysis
