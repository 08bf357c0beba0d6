// Per-rank figures (lateness, iteration and communication time), the
// rank x iteration lateness matrix, and the timeline sample for charts.
#include <algorithm>
#include <map>

#include "profiler/analysis/rank_view.h"
#include "profiler/analysis/stragglers.h"
#include "profiler/core/records.h"
#include "profiler/core/stats.h"

namespace ddpscope::analysis {
namespace {

// How late rank v.rank entered each of its iterations: its first bucket.
std::vector<double> lateness_row(const RankView& v, const Lateness& late) {
  std::vector<double> row;
  for (const auto& it : v.split.iterations) {
    auto late_ms = late.by_collective.find({v.ddp[it.first].comm_id, v.ddp[it.first].seq}, v.rank);
    row.push_back(late_ms.value_or(0));
  }
  return row;
}

}  // namespace

void rank_summary(RunAnalysis& run, const std::vector<Call>& calls,
                  const std::vector<ProcessRecord>& procs, const std::vector<RankView>& views) {
  std::map<int, std::string> host_of;
  for (const auto& p : procs) host_of[p.rank] = p.host;
  Lateness late = measure_lateness(calls, host_of);
  std::map<int, uint64_t> count;
  for (const auto& c : calls) ++count[c.rank];
  // Each rank's steady steps and its view, gathered once: looked up rank by
  // rank, they made this quadratic in the ranks.
  struct SteadySteps {
    std::vector<double> iter_ms, comm_ms;
  };
  std::map<int, SteadySteps> steps;
  for (const auto& s : run.iteration_list)
    if (!s.warmup) {
      auto& mine = steps[s.rank];
      if (s.iter_ms > 0) mine.iter_ms.push_back(s.iter_ms);
      mine.comm_ms.push_back(s.comm_ms);
    }
  std::map<int, const RankView*> view_of;  // a rank's last view, as the loop over views took
  for (const auto& v : views) view_of[v.rank] = &v;
  for (const auto& p : procs) {
    RankStats r;
    r.rank = p.rank;
    r.host = p.host;
    r.dropped_events = p.dropped_events;
    r.collectives = count[p.rank];
    auto& l = late.late_ms[p.rank];
    r.late_ms_median = stats::quantile(l, 0.5);
    r.late_ms_p95 = stats::quantile(l, 0.95);
    r.late_ms_max = l.empty() ? 0 : *std::max_element(l.begin(), l.end());
    r.last_share_pct = late.matched ? 100.0 * late.last_count[p.rank] / late.matched : 0;
    r.clock_correction_us = late.correction_us[p.rank];
    if (auto h = late.clocks.hosts.find(p.host); h != late.clocks.hosts.end()) {
      const HostClock* ref = late.clocks.hosts.count(late.clocks.reference)
                                 ? &late.clocks.hosts.at(late.clocks.reference)
                                 : nullptr;
      if (p.host != late.clocks.reference)
        r.clock_drift_ppm = (h->second.drift - (ref ? ref->drift : 0)) * 1e6;
      r.clock_residual_us = h->second.residual_ns / 1e3;
    }
    const auto& mine = steps[p.rank];
    r.iter_ms_median = stats::quantile(mine.iter_ms, 0.5);
    r.comm_ms_median = stats::quantile(mine.comm_ms, 0.5);
    if (auto v = view_of.find(p.rank); v != view_of.end()) {
      r.fsdp_comm_ms_median = v->second->fsdp_comm_ms_median;
      r.fsdp_exposed_ms_median = v->second->fsdp_exposed_ms_median;
    }
    run.ranks.push_back(r);
  }
  for (const auto& v : views) run.lateness.push_back(lateness_row(v, late));
  for (size_t i = 0; i < run.ranks.size() && i < views.size(); ++i) {
    const auto& row = run.lateness[i];
    std::vector<double> steady;
    for (size_t k = 0; k < row.size(); ++k)
      if (!views[i].split.iterations[k].warmup) steady.push_back(row[k]);
    run.ranks[i].iteration_late_ms_median = stats::quantile(steady, 0.5);
  }
}

void timeline_sample(RunAnalysis& run, const std::vector<RankView>& views, int iterations,
                     int64_t origin) {
  auto ms = [&](int64_t ns) { return double(ns - origin) / 1e6; };
  for (const auto& v : views) {
    int taken = 0;
    for (size_t k = 0; k < v.split.iterations.size() && taken < iterations; ++k) {
      const auto& it = v.split.iterations[k];
      if (it.warmup) continue;
      ++taken;
      int64_t lo = v.ddp[it.first].start, hi = lo;
      for (size_t i = it.first; i < it.first + it.count; ++i) {
        const Call& c = v.ddp[i];
        run.timeline.push_back({v.rank, int(k), "comm", "bucket " + std::to_string(i - it.first),
                                ms(c.start), ms(c.end)});
        hi = std::max(hi, c.end);
      }
      // The compute this iteration's communication could hide behind.
      int64_t next =
          k + 1 < v.split.iterations.size() ? v.ddp[v.split.iterations[k + 1].first].start : hi;
      for (const auto& span : clip(v.compute, lo, next))
        run.timeline.push_back({v.rank, int(k), "compute",
                                v.compute_from_kernels ? "compute kernels" : "backward (approx.)",
                                ms(span.start), ms(span.end)});
    }
  }
}

}  // namespace ddpscope::analysis
