// DDP's own account of one rank (the Python start-up hook's ddp_info and
// ddp_regions rows), and what the analysis makes of it: every collective of
// the rank given its role (DDP bucket, DDP control, user, unknown), the DDP
// instance and bucket index that issued it, and the backward pass it belongs
// to. docs/analysis.md explains the rules; in short:
//
//  * A region names the collectives its process group numbered while it ran
//    (seq_begin..seq_end-1). The native hooks number them too (the Gloo tag,
//    or our own per-communicator count for NCCL), from another origin: the
//    offset is fixed once per group by DDP's constructor, whose collectives
//    are synchronous and so run inside its region.
//  * Innermost region wins: a comm hook's all-reduce is bucket k of its
//    instance; a forward's or constructor's are control; a user call's user.
//  * What no region names the reducer issued in backward: bucket all-reduces
//    in bucket order, matched against the instance's layout, and the
//    used-parameter map (4 bytes per parameter) where DDP looks for unused ones.
#pragma once

#include <map>
#include <vector>

#include "profiler/analysis/iterations.h"
#include "profiler/analysis/run_analysis.h"
#include "profiler/core/records.h"

namespace ddpscope::analysis {

// One instance's facts (latest value per key), parsed.
struct DdpFacts {
  DdpInstanceSummary summary;             // buckets_from stays "pattern" until classified
  std::vector<uint64_t> initial_buckets;  // DDP's first layout (bucket_sizes)
  std::vector<uint64_t> rebuilt_buckets;  // after rebuild (empty: not reported)
  int64_t pg_key = 0;
  int pg_size = 0;
};

std::map<int, DdpFacts> ddp_facts(const std::vector<DdpInfoRecord>& info);

// "1 2 3" or "1, 2, 3" -> {1, 2, 3}; anything else is skipped.
std::vector<uint64_t> parse_sizes(const std::string& text);

// A backward pass (or join shadow step) that issued bucket all-reduces.
struct BackwardGroup {
  int instance = -1;
  bool warmup = false;  // before DDP rebuilt its buckets
  bool shadow = false;  // a join shadow step
};

struct RankAccount {
  std::map<int, DdpFacts> instances;
  std::map<uint32_t, BackwardGroup> groups;  // by Call::group
  int primary = -1;  // whose backward passes are the iterations (primary_instance); -1: none
  std::vector<int> classified;  // instances whose collectives were classified from the account
};

// Classifies `calls` (this rank's collectives, any order) in place from the
// rank's regions and facts. Instances whose process group could not be tied
// to a communicator keep buckets_from = "pattern" and their calls stay unknown.
RankAccount classify_rank(std::vector<Call>& calls, const std::vector<DdpRegionRecord>& regions,
                          const std::vector<DdpInfoRecord>& info);

// The iterations of one instance from its classified bucket calls (`calls`:
// that instance's ddp_bucket calls, in seq order): one per backward pass or
// join shadow step; warm-up before DDP's rebuild.
IterationSplit split_by_backward(const std::vector<Call>& calls, const RankAccount& account);

}  // namespace ddpscope::analysis
