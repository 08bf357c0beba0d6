// What the analysis learned of each collective, kept for the timelines
// (report --trace): who issued it and for what (a DDP bucket, an FSDP unit's
// phase), so that a slice reads "allreduce bucket 3" or "allgather
// blocks.1 forward" rather than an anonymous op.
//
// Sized for runs of millions of collectives: one 16-byte entry per labelled
// collective (its rank, row id and the index of its label), the labels
// themselves held once each (a run has a few dozen: ranks x units x phases).
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "profiler/analysis/iterations.h"
#include "profiler/analysis/run_analysis.h"

namespace ddpscope::analysis {

struct FsdpRankAccount;

// One distinct label.
struct CollectiveLabel {
  CollectiveRole role = CollectiveRole::unknown;
  Op op = Op::allreduce;        // the op it is, by its role (FSDP's reduce-scatter
                                // is one even where Gloo carries it as an all-reduce)
  int bucket = -1;              // ddp_bucket: DDP's bucket index
  int ddp_instance = -1;        // DDP roles: the instance (creation order in the process)
  std::string unit;             // FSDP roles: the unit's module ("(root)" for the root's own)
  const char* phase = nullptr;  // FSDP roles: name_of(FsdpRegionKind)
  bool prefetch = false;        // an all-gather another unit issued ahead of need
  std::string name;             // the slice's name: "allreduce bucket 3"
};

class CollectiveLabels {
 public:
  // `calls`: classified (every role final); `fsdp`: each rank's FSDP account.
  CollectiveLabels(std::span<const Call> calls, const std::map<int, FsdpRankAccount>& fsdp);
  CollectiveLabels() = default;

  // The label of a collective (its rank and collectives.id), or null: the
  // analysis could not tell who issued it.
  const CollectiveLabel* find(int rank, int64_t id) const;
  size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    int64_t id;
    int32_t rank;
    uint32_t label;
    bool operator<(const Entry& o) const { return std::tie(rank, id) < std::tie(o.rank, o.id); }
  };
  uint32_t intern(CollectiveLabel label);

  std::vector<Entry> entries_;  // sorted by (rank, id)
  std::vector<CollectiveLabel> labels_;
  std::map<std::string, uint32_t> by_name_;  // a label's name and role make it one
};

}  // namespace ddpscope::analysis
