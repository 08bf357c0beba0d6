// The Python start-up hook's accounts, read from the run per rank: FSDP's
// first (its collectives then carry FSDP's roles, which DDP's classification
// leaves alone), then DDP's; and FSDP's figures put into the run
// (fsdp_units.h). Called by analyze_run (analyze.cpp).
#include "profiler/analysis/ddp_account.h"
#include "profiler/analysis/fsdp_account.h"
#include "profiler/analysis/fsdp_units.h"
#include "profiler/analysis/rank_view.h"
#include "profiler/core/stats.h"
#include "profiler/store/reader.h"

namespace ddpscope::analysis {

// Each rank's collectives classified from FSDP's own account, where it has
// one: before DDP's, which leaves FSDP's collectives alone.
std::map<int, FsdpRankAccount> classify_fsdp(store::RunReader& reader,
                                             const std::map<int, std::span<Call>>& by_rank) {
  std::map<int, std::vector<FsdpInfoRecord>> info;
  for (auto& r : reader.rows<FsdpInfoRecord>("", "rank, recorded_ns")) info[r.rank].push_back(r);
  if (info.empty()) return {};
  std::map<int, std::vector<FsdpRegionRecord>> regions;
  for (auto& r : reader.rows<FsdpRegionRecord>()) regions[r.rank].push_back(r);
  std::map<int, FsdpRankAccount> out;
  for (auto& [rank, facts] : info) {
    auto calls = by_rank.find(rank);
    out[rank] = classify_fsdp_rank(calls == by_rank.end() ? std::span<Call>() : calls->second,
                                   std::move(regions[rank]), facts);
  }
  return out;
}

// Each rank's collectives classified from DDP's own account, where it has one.
std::map<int, RankAccount> classify(store::RunReader& reader, std::vector<Call>& calls) {
  std::map<int, std::vector<DdpInfoRecord>> info;
  for (auto& r : reader.rows<DdpInfoRecord>("", "rank, recorded_ns")) info[r.rank].push_back(r);
  std::map<int, std::vector<DdpRegionRecord>> regions;
  for (auto& r : reader.rows<DdpRegionRecord>()) regions[r.rank].push_back(r);
  // Every rank the hook noted anything of: DDP's facts, or regions alone (a
  // job without DDP: the user's own calls).
  for (const auto& [rank, r] : regions) info[rank];
  // One pass to find each rank's calls: a pass per rank would cost ranks x calls.
  std::map<int, std::vector<size_t>> by_rank;
  for (size_t i = 0; i < calls.size(); ++i)
    if (info.count(calls[i].rank)) by_rank[calls[i].rank].push_back(i);
  std::map<int, RankAccount> out;
  for (auto& [rank, facts] : info) {
    const auto& index = by_rank[rank];
    std::vector<Call> mine;
    mine.reserve(index.size());
    for (size_t i : index) mine.push_back(calls[i]);
    out[rank] = classify_rank(mine, regions[rank], facts);
    for (size_t k = 0; k < index.size(); ++k) calls[index[k]] = mine[k];
  }
  return out;
}

// FSDP's units and steps; a rank without DDP iterations takes FSDP's steps
// for its iterations.
void fsdp_summary(RunAnalysis& run, std::vector<RankView>& views,
                  std::map<int, std::span<Call>>& by_rank,
                  const std::map<int, FsdpRankAccount>& accounts) {
  if (accounts.empty()) return;
  std::vector<FsdpRankInput> in;
  for (const auto& v : views) {
    auto acc = accounts.find(v.rank);
    if (acc == accounts.end()) continue;
    static const std::vector<Interval> kNone;
    in.push_back(
        {v.rank, by_rank[v.rank], &acc->second, v.compute_from_kernels ? &v.compute : &kNone});
  }
  auto fsdp = analyze_fsdp(in);
  run.fsdp = std::move(fsdp.roots);
  std::vector<double> comm, exposed;
  for (auto& v : views) {
    auto steps = fsdp.steps.find(v.rank);
    if (steps == fsdp.steps.end()) continue;
    std::vector<double> rank_comm, rank_exposed;
    for (const auto& s : steps->second)
      if (!s.warmup) rank_comm.push_back(s.fsdp_comm_ms), rank_exposed.push_back(s.fsdp_exposed_ms);
    v.fsdp_comm_ms_median = stats::quantile(rank_comm, 0.5);
    v.fsdp_exposed_ms_median = stats::quantile(rank_exposed, 0.5);
    comm.insert(comm.end(), rank_comm.begin(), rank_comm.end());
    exposed.insert(exposed.end(), rank_exposed.begin(), rank_exposed.end());
    if (!v.split.iterations.empty()) continue;
    v.fsdp_steps = std::move(steps->second);
    // On CPU, FSDP's exposed time is what the training thread was blocked.
    if (!v.compute_from_kernels) run.compute_source = "blocked-thread";
  }
  run.iterations.fsdp_comm_median_ms = stats::quantile(comm, 0.5);
  run.iterations.fsdp_exposed_median_ms = stats::quantile(exposed, 0.5);
}

}  // namespace ddpscope::analysis
