// fsdp_facts and classify_fsdp_rank (fsdp_account.h).
#include "profiler/analysis/fsdp_account.h"

#include <algorithm>

#include "profiler/analysis/facts.h"

namespace ddpscope::analysis {
namespace {

FsdpUnitFacts unit_facts_of(int unit, const Facts& kv) {
  FsdpUnitFacts f;
  f.unit = unit;
  f.root = int(fact_number(kv, "root"));
  f.fqn = fact_text(kv, "fqn");
  f.module = fact_text(kv, "module");
  f.root_module = fact_text(kv, "root_module");
  f.params = int(fact_number(kv, "params"));
  f.unsharded_numel = fact_number(kv, "padded_unsharded_numel");
  f.all_gather_dtype = fact_text(kv, "all_gather_dtype");
  f.reduce_dtype = fact_text(kv, "reduce_dtype");
  f.reshard_after_forward = fact_text(kv, "reshard_after_forward") != "0";
  f.all_gather_pg = fact_signed(kv, "all_gather_pg");
  f.reduce_scatter_pg = fact_signed(kv, "reduce_scatter_pg");
  f.all_reduce_pg = fact_signed(kv, "all_reduce_pg");
  f.all_gather_size = int(fact_number(kv, "all_gather_size"));
  f.all_reduce_size = int(fact_number(kv, "all_reduce_size"));
  return f;
}

bool issues_one(const FsdpRegionRecord& r) {
  return r.seq_begin >= 0 && r.seq_end == r.seq_begin + 1;
}

CollectiveRole role_of(FsdpRegionKind kind) {
  switch (kind) {
    case FsdpRegionKind::forward_all_gather:
    case FsdpRegionKind::backward_all_gather:
      return CollectiveRole::fsdp_all_gather;
    case FsdpRegionKind::reduce_scatter:
      return CollectiveRole::fsdp_reduce_scatter;
    default:
      return CollectiveRole::fsdp_all_reduce;
  }
}

bool reduction(FsdpRegionKind k) {
  return k == FsdpRegionKind::reduce_scatter || k == FsdpRegionKind::all_reduce;
}

struct Tie {
  uint64_t comm_id = 0;
  int64_t offset = 0;  // group seq = native seq + offset
};

// Each group's communicator and offset: the votes of the collectives started
// (host side) inside the regions that issued one collective on that group.
std::map<int64_t, Tie> tie_groups(std::span<const Call> calls,
                                  const std::vector<FsdpRegionRecord>& regions) {
  std::vector<size_t> by_start(calls.size());
  for (size_t i = 0; i < calls.size(); ++i) by_start[i] = i;
  std::sort(by_start.begin(), by_start.end(),
            [&](size_t a, size_t b) { return calls[a].host_start < calls[b].host_start; });
  std::map<int64_t, std::map<std::pair<uint64_t, int64_t>, int>> votes;
  for (const auto& r : regions) {
    if (!issues_one(r)) continue;
    auto first = std::lower_bound(by_start.begin(), by_start.end(), r.start_ns,
                                  [&](size_t i, int64_t t) { return calls[i].host_start < t; });
    for (auto it = first; it != by_start.end() && calls[*it].host_start <= r.end_ns; ++it)
      ++votes[r.pg_key][{calls[*it].comm_id, r.seq_begin - int64_t(calls[*it].seq)}];
  }
  std::map<int64_t, Tie> out;
  for (const auto& [pg, counts] : votes) {
    auto best = std::max_element(counts.begin(), counts.end(),
                                 [](auto& a, auto& b) { return a.second < b.second; });
    out[pg] = {best->first.first, best->first.second};
  }
  return out;
}

}  // namespace

std::map<int, FsdpUnitFacts> fsdp_facts(const std::vector<FsdpInfoRecord>& info) {
  std::map<int, Facts> kv;  // rows in recording order: a later value supersedes
  for (const auto& r : info) kv[r.unit][r.key] = r.value;
  std::map<int, FsdpUnitFacts> out;
  for (const auto& [unit, facts] : kv) out[unit] = unit_facts_of(unit, facts);
  return out;
}

// A step begins at a root pre-forward that follows a backward which reduced
// gradients: micro-batches accumulated without gradient sync
// (set_requires_gradient_sync(False)) belong to the step they end in. A rank
// that never reduced keeps every forward as a step.
std::vector<int64_t> step_starts(const FsdpRankAccount& acc) {
  std::vector<int64_t> forwards, reductions, out;
  for (const auto& r : acc.regions) {
    if (r.kind == FsdpRegionKind::step) forwards.push_back(r.start_ns);
    if (reduction(r.kind)) reductions.push_back(r.start_ns);
  }
  std::sort(forwards.begin(), forwards.end());
  std::sort(reductions.begin(), reductions.end());
  for (size_t i = 0; i < forwards.size(); ++i) {
    auto r = std::lower_bound(reductions.begin(), reductions.end(), i ? forwards[i - 1] : 0);
    if (i == 0 || reductions.empty() || (r != reductions.end() && *r < forwards[i]))
      out.push_back(forwards[i]);
  }
  return out;
}

FsdpRankAccount classify_fsdp_rank(std::span<Call> calls, std::vector<FsdpRegionRecord> regions,
                                   const std::vector<FsdpInfoRecord>& info) {
  FsdpRankAccount acc;
  acc.units = fsdp_facts(info);
  std::stable_sort(regions.begin(), regions.end(),
                   [](auto& a, auto& b) { return a.start_ns < b.start_ns; });
  acc.regions = std::move(regions);
  if (acc.empty()) return acc;
  auto ties = tie_groups(calls, acc.regions);
  // (communicator, native seq) -> region
  std::map<std::pair<uint64_t, int64_t>, size_t> issued;
  for (size_t i = 0; i < acc.regions.size(); ++i) {
    const auto& r = acc.regions[i];
    auto tie = ties.find(r.pg_key);
    if (issues_one(r) && tie != ties.end() && acc.units.count(r.unit))
      issued[{tie->second.comm_id, r.seq_begin - tie->second.offset}] = i;
  }
  for (auto& c : calls) {
    auto hit = issued.find({c.comm_id, int64_t(c.seq)});
    if (hit == issued.end()) continue;
    c.role = role_of(acc.regions[hit->second].kind);
    c.instance = acc.regions[hit->second].unit;
    acc.region_of[c.id] = hit->second;
  }
  return acc;
}

}  // namespace ddpscope::analysis
