// FSDP2's own account of one rank (the Python start-up hook's fsdp_info and
// fsdp_regions rows), and what the analysis makes of it: each collective FSDP
// issued given its role (fsdp_all_gather, fsdp_reduce_scatter,
// fsdp_all_reduce) and its unit, and the marks that time the rest (a unit's
// wait for its parameters, a step's start, backward's end).
//
// A region names the one collective its process group numbered seq_begin.
// The native hooks number collectives from another origin, so each group is
// tied to a communicator and an offset by the regions themselves: the
// collective a region issued was started (host side) while the region ran,
// and the (communicator, offset) most regions agree on wins.
#pragma once

#include <map>
#include <span>
#include <unordered_map>
#include <vector>

#include "profiler/analysis/iterations.h"
#include "profiler/core/records.h"

namespace ddpscope::analysis {

// One unit's facts (latest value per key), parsed.
struct FsdpUnitFacts {
  int unit = 0;
  int root = 0;
  std::string fqn, module;
  std::string root_module;  // the root unit's: its root module's class
  int params = 0;
  uint64_t unsharded_numel = 0;  // padded, over the all-gather group
  std::string all_gather_dtype, reduce_dtype;
  bool reshard_after_forward = true;
  int64_t all_gather_pg = 0, reduce_scatter_pg = 0, all_reduce_pg = 0;
  int all_gather_size = 0, all_reduce_size = 0;
};

std::map<int, FsdpUnitFacts> fsdp_facts(const std::vector<FsdpInfoRecord>& info);

struct FsdpRankAccount {
  std::map<int, FsdpUnitFacts> units;
  std::vector<FsdpRegionRecord> regions;  // by start time
  // collectives.id -> the region (index into `regions`) that issued it
  std::unordered_map<int64_t, size_t> region_of;
  bool empty() const { return units.empty(); }
};

// Classifies this rank's `calls` in place (role, and `instance` = the unit)
// from its regions and facts.
FsdpRankAccount classify_fsdp_rank(std::span<Call> calls, std::vector<FsdpRegionRecord> regions,
                                   const std::vector<FsdpInfoRecord>& info);

// The rank's steps, as the start of each (ns, ascending): the root
// pre-forwards that follow a backward which reduced gradients (a step of
// accumulated micro-batches is one).
std::vector<int64_t> step_starts(const FsdpRankAccount& acc);

}  // namespace ddpscope::analysis
