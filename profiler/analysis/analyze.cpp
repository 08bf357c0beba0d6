#include "profiler/analysis/analyze.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "profiler/analysis/op_summary.h"
#include "profiler/analysis/rank_view.h"
#include "profiler/analysis/recommend.h"
#include "profiler/analysis/stragglers.h"
#include "profiler/core/stats.h"
#include "profiler/store/sqlite.h"

namespace ddpscope::analysis {
namespace {

Call to_call(const CollectiveRecord& c) {
  Call x;
  x.host_start = c.host_start_ns;
  x.start = execution_start(c);
  x.end = execution_end(c);
  x.bytes = c.bytes;
  x.seq = c.seq;
  x.comm_id = c.comm_id;
  x.rank = c.rank;
  x.nranks = c.nranks;
  x.op = c.op;
  return x;
}

// The communicator DDP reduces gradients on: the one with the most all-reduce
// bytes on this rank.
uint64_t ddp_comm(const std::vector<Call>& calls, int rank) {
  std::map<uint64_t, uint64_t> bytes;
  for (const auto& c : calls)
    if (c.rank == rank && c.op == Op::allreduce) bytes[c.comm_id] += c.bytes;
  return busiest_comm(bytes);
}

std::vector<Interval> query_intervals(store::RunReader& reader, const std::string& sql, int rank) {
  std::vector<Interval> out;
  store::Statement st(reader.connection(), sql);
  st.bind(1, int64_t(rank));
  while (st.step()) out.push_back({st.int64(0), st.int64(1)});
  return out;
}

RankView make_view(store::RunReader& reader, const std::vector<Call>& calls, int rank,
                   std::vector<Interval> compute) {
  RankView v;
  v.rank = rank;
  uint64_t comm = ddp_comm(calls, rank);
  for (const auto& c : calls)
    if (c.rank == rank && c.op == Op::allreduce && c.comm_id == comm) v.ddp.push_back(c);
  std::sort(v.ddp.begin(), v.ddp.end(), [](const Call& a, const Call& b) { return a.seq < b.seq; });
  auto steps = union_of(query_intervals(
      reader,
      "SELECT start_ns, end_ns FROM ranges WHERE rank = ? AND (name LIKE 'step%' OR name LIKE "
      "'iteration%' OR name LIKE 'train_step%') ORDER BY start_ns",
      rank));
  v.split = steps.size() >= 2 ? split_by_ranges(v.ddp, steps) : split_iterations(v.ddp);
  v.compute = union_of(std::move(compute));
  v.compute_from_kernels = !v.compute.empty();
  if (!v.compute_from_kernels) v.compute = backward_windows(v);
  return v;
}

void size_classes(const std::vector<Call>& calls, RunAnalysis& run) {
  std::map<std::tuple<Op, uint64_t, int>, std::vector<double>> groups;
  for (const auto& c : calls)
    groups[{c.op, c.bytes, c.nranks}].push_back(double(c.end - c.start) / 1e3);
  for (auto& [key, d] : groups) {
    SizeClassStats s;
    std::tie(s.op, s.bytes, s.nranks) = key;
    s.calls = d.size();
    s.median_us = stats::quantile(d, 0.5);
    s.p95_us = stats::quantile(d, 0.95);
    if (s.median_us > 0 && s.bytes > 0) {
      s.algbw_gbps = double(s.bytes) / (s.median_us * 1e3);
      s.busbw_gbps = s.algbw_gbps * busbw_factor(s.op, s.nranks);
    }
    run.collectives.push_back(s);
  }
}

void iteration_summary(RunAnalysis& run, const std::vector<RankView>& views) {
  std::vector<double> iter, comm, exposed, busy, counts, warm;
  for (const auto& v : views) {
    auto stats = iteration_stats(v);
    counts.push_back(double(stats.size()));
    warm.push_back(
        double(std::count_if(stats.begin(), stats.end(), [](auto& s) { return s.warmup; })));
    for (const auto& s : stats) {
      if (!s.warmup) {
        if (s.iter_ms > 0) iter.push_back(s.iter_ms);
        comm.push_back(s.comm_ms);
        exposed.push_back(s.exposed_ms);
        busy.push_back(s.comm_busy_ms);
      }
      run.iteration_list.push_back(s);
    }
  }
  auto& it = run.iterations;
  // Counts are whole: the median over ranks rounded, halves up.
  it.count = int(std::lround(stats::median(counts)));
  it.warmup = int(std::lround(stats::median(warm)));
  it.median_ms = stats::quantile(iter, 0.5);
  it.p95_ms = stats::quantile(iter, 0.95);
  double sum = 0;
  for (double x : iter) sum += x;
  it.mean_ms = iter.empty() ? 0 : sum / double(iter.size());
  it.comm_median_ms = stats::quantile(comm, 0.5);
  it.exposed_median_ms = stats::quantile(exposed, 0.5);
  it.busy_median_ms = stats::quantile(busy, 0.5);
}

}  // namespace

void rank_summary(RunAnalysis& run, const std::vector<Call>& calls,
                  const std::vector<ProcessRecord>& procs, const std::vector<RankView>& views);
void timeline_sample(RunAnalysis& run, const std::vector<RankView>& views, int iterations,
                     int64_t origin);

RunAnalysis analyze_run(store::RunReader& reader, const AnalysisOptions& options) {
  RunAnalysis run;
  run.path = reader.path();
  run.command = reader.meta()["command_line"];
  auto procs = reader.processes();
  run.ranks_recorded = int(procs.size());
  std::map<std::string, int> backends;
  for (const auto& p : procs) {
    run.world_size = std::max(run.world_size, p.world_size);
    ++backends[std::string(name_of(p.backend))];
  }
  for (auto& [b, n] : backends)
    if (run.backend.empty() || n > backends[run.backend]) run.backend = b;

  std::vector<Call> calls;
  OpSummarizer ops;
  Timing best = Timing::none;
  int64_t origin = INT64_MAX;
  reader.for_each_collective([&](const CollectiveRecord& c) {
    ops.add(c);
    calls.push_back(to_call(c));
    best = std::max(best, c.timing);
    origin = std::min(origin, c.host_start_ns);
  });
  run.ops = ops.finish();
  run.timing = std::string(name_of(best));

  std::vector<RankView> views;
  std::set<int> ranks;
  for (const auto& p : procs) ranks.insert(p.rank);
  auto compute = compute_kernels(reader);
  for (int r : ranks) views.push_back(make_view(reader, calls, r, std::move(compute[r])));
  bool kernels =
      std::any_of(views.begin(), views.end(), [](auto& v) { return v.compute_from_kernels; });
  run.compute_source = kernels ? "kernels" : "backward-window";

  iteration_summary(run, views);
  run.buckets = bucket_stats(views);
  size_classes(calls, run);
  rank_summary(run, calls, procs, views);
  timeline_sample(run, views, options.timeline_iterations, origin == INT64_MAX ? 0 : origin);
  run.recommendations = recommend(run);
  return run;
}

}  // namespace ddpscope::analysis
