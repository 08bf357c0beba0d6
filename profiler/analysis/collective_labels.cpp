#include "profiler/analysis/collective_labels.h"

#include <algorithm>
#include <set>

#include "profiler/analysis/fsdp_account.h"
#include "profiler/analysis/fsdp_stats.h"

namespace ddpscope::analysis {
namespace {

Op op_of_role(CollectiveRole role, Op carried) {
  switch (role) {
    case CollectiveRole::fsdp_all_gather:
      return Op::allgather;
    case CollectiveRole::fsdp_reduce_scatter:
      return Op::reduce_scatter;
    case CollectiveRole::fsdp_all_reduce:
      return Op::allreduce;
    default:
      return carried;
  }
}

// DDP's roles: "bucket 3" (instance 0), "DDP 1 bucket 3", "DDP control".
std::string ddp_text(const CollectiveLabel& l) {
  std::string ddp = l.ddp_instance > 0 ? "DDP " + std::to_string(l.ddp_instance) + " " : "";
  if (l.role == CollectiveRole::ddp_bucket) return ddp + "bucket " + std::to_string(l.bucket);
  return (ddp.empty() ? "DDP " : ddp) + "control";
}

// FSDP's, after the op: "blocks.1 forward", "blocks.1 backward (prefetch)",
// "blocks.1" (its reduce-scatter), "blocks.1 HSDP" (the replicate group's
// all-reduce).
std::string fsdp_text(const CollectiveLabel& l, FsdpRegionKind kind) {
  switch (kind) {
    case FsdpRegionKind::forward_all_gather:
      return l.unit + " forward" + (l.prefetch ? " (prefetch)" : "");
    case FsdpRegionKind::backward_all_gather:
      return l.unit + " backward" + (l.prefetch ? " (prefetch)" : "");
    case FsdpRegionKind::all_reduce:
      return l.unit + " HSDP";
    default:
      return l.unit;
  }
}

// The rank's FSDP roots: of several, a unit is named "blocks.1 of root 5",
// as every report names it (fsdp_stats.h: of_root).
size_t root_count(const FsdpRankAccount& acc) {
  std::set<int> roots;
  for (const auto& [unit, facts] : acc.units) roots.insert(facts.root);
  return roots.size();
}

CollectiveLabel fsdp_label(const Call& c, const FsdpRankAccount& acc, size_t roots) {
  CollectiveLabel l;
  l.role = c.role;
  l.op = op_of_role(c.role, c.op);
  auto unit = acc.units.find(c.instance);
  if (unit == acc.units.end())
    l.unit = "(root)";
  else
    l.unit = (unit->second.fqn.empty() ? "(root)" : unit->second.fqn) +
             of_root(unit->second.root, roots);
  auto region = acc.region_of.find(c.id);
  FsdpRegionKind kind = c.role == CollectiveRole::fsdp_reduce_scatter
                            ? FsdpRegionKind::reduce_scatter
                            : FsdpRegionKind::all_reduce;
  if (region != acc.region_of.end()) {
    const auto& r = acc.regions[region->second];
    kind = r.kind;
    l.prefetch = (r.flags & kFsdpPrefetch) != 0;
  }
  l.phase = name_of(kind);
  l.name = std::string(name_of(l.op)) + " " + fsdp_text(l, kind);
  return l;
}

}  // namespace

CollectiveLabels::CollectiveLabels(std::span<const Call> calls,
                                   const std::map<int, FsdpRankAccount>& fsdp) {
  std::map<int, size_t> roots;  // per rank, counted at its first FSDP collective
  for (const Call& c : calls) {
    if (c.role == CollectiveRole::unknown) continue;
    CollectiveLabel l;
    if (is_fsdp(c.role)) {
      auto acc = fsdp.find(c.rank);
      if (acc == fsdp.end()) continue;
      auto [count, first] = roots.try_emplace(c.rank, 0);
      if (first) count->second = root_count(acc->second);
      l = fsdp_label(c, acc->second, count->second);
    } else {
      l.role = c.role;
      l.op = c.op;
      if (c.role != CollectiveRole::user) {
        l.ddp_instance = c.instance;
        l.bucket = c.role == CollectiveRole::ddp_bucket ? c.bucket : -1;
      }
      l.name = std::string(name_of(c.op)) + " " +
               (c.role == CollectiveRole::user ? std::string("user") : ddp_text(l));
    }
    entries_.push_back({c.id, c.rank, intern(std::move(l))});
  }
  std::sort(entries_.begin(), entries_.end());
}

uint32_t CollectiveLabels::intern(CollectiveLabel label) {
  auto [at, added] = by_name_.try_emplace(std::string(name_of(label.role)) + "\n" + label.name,
                                          uint32_t(labels_.size()));
  if (added) labels_.push_back(std::move(label));
  return at->second;
}

const CollectiveLabel* CollectiveLabels::find(int rank, int64_t id) const {
  Entry key{id, rank, 0};
  auto it = std::lower_bound(entries_.begin(), entries_.end(), key);
  if (it == entries_.end() || it->rank != rank || it->id != id) return nullptr;
  return &labels_[it->label];
}

}  // namespace ddpscope::analysis
