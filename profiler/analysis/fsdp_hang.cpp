// fsdp_call_label (fsdp_hang.h).
#include "profiler/analysis/fsdp_hang.h"

#include <algorithm>

#include "profiler/analysis/fsdp_account.h"

namespace ddpscope::analysis {
namespace {

// An FSDP collective on the asked one's communicator, in a step.
struct Placed {
  uint64_t seq = 0;
  int step = -1;
  Op op = Op::allreduce;
  const FsdpRegionRecord* region = nullptr;
  bool same_place(const Placed& o) const {
    return region->unit == o.region->unit && region->kind == o.region->kind;
  }
};

FsdpCallLabel label_of(const FsdpRankAccount& acc, const FsdpRegionRecord& r, int step) {
  auto unit = acc.units.find(r.unit);
  return {unit == acc.units.end() ? "" : unit->second.fqn, r.kind, step};
}

}  // namespace

std::optional<FsdpCallLabel> fsdp_call_label(std::vector<Call> mine, const Call& asked,
                                             std::vector<FsdpRegionRecord> regions,
                                             const std::vector<FsdpInfoRecord>& info) {
  FsdpRankAccount acc = classify_fsdp_rank(mine, std::move(regions), info);
  if (acc.empty()) return std::nullopt;
  const auto steps = step_starts(acc);
  auto step_of = [&](int64_t t) {
    return int(std::upper_bound(steps.begin(), steps.end(), t) - steps.begin()) - 1;
  };
  // Completed: its own region says (in-flight rows have no collectives.id).
  if (auto it = acc.region_of.find(asked.id); asked.id > 0 && it != acc.region_of.end()) {
    const auto& r = acc.regions[it->second];
    return label_of(acc, r, step_of(r.start_ns));
  }
  const int step = step_of(asked.host_start);
  std::vector<Placed> before, previous;  // this step's calls before it; the step before's
  for (const auto& c : mine) {
    auto it = acc.region_of.find(c.id);
    if (c.comm_id != asked.comm_id || c.id <= 0 || it == acc.region_of.end()) continue;
    Placed p{c.seq, step_of(c.host_start), c.op, &acc.regions[it->second]};
    if (p.step == step && c.seq < asked.seq) before.push_back(p);
    if (p.step == step - 1 && step > 0) previous.push_back(p);
  }
  auto by_seq = [](const Placed& a, const Placed& b) { return a.seq < b.seq; };
  std::sort(before.begin(), before.end(), by_seq);
  std::sort(previous.begin(), previous.end(), by_seq);
  const size_t at = before.size();
  if (previous.size() <= at || previous[at].op != asked.op) return std::nullopt;
  for (size_t i = 0; i < at; ++i)
    if (!before[i].same_place(previous[i])) return std::nullopt;
  return label_of(acc, *previous[at].region, step);
}

}  // namespace ddpscope::analysis
