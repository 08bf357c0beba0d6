#include "profiler/regression/recorded_metrics.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "profiler/analysis/analyze.h"
#include "profiler/analysis/iterations.h"
#include "profiler/analysis/op_summary.h"
#include "profiler/core/units.h"
#include "profiler/core/vocab.h"

namespace ddpscope::regression {
namespace {

Metric per_iteration(const analysis::RunAnalysis& run, const std::string& family,
                     const std::string& label, double analysis::IterationStats::*field) {
  double floor = per_iteration_floor(run.iterations.median_ms);
  Metric m{family, family, label, "ms", Better::lower, floor, {}};
  for (const auto& it : run.iteration_list)  // rank by rank, in iteration order
    if (!it.warmup) m.samples.push_back(it.*field);
  return m;
}

// A DDP all-reduce as the bucket samples need it (compact: runs have millions).
struct BucketCall {
  int64_t start = 0, end = 0;
  uint64_t seq = 0;
};

// Each rank's all-reduces on its DDP communicator (as analyze_run picks it:
// the one with the most all-reduce bytes), ordered by start. Two streaming
// passes, so memory stays at one small record per DDP call.
std::map<int, std::vector<BucketCall>> ddp_calls(store::RunReader& reader) {
  std::map<int, std::map<uint64_t, uint64_t>> bytes;
  reader.for_each_collective(
      [&](const CollectiveRecord& c) { bytes[c.rank][c.comm_id] += c.bytes; }, "op = 'allreduce'");
  std::map<int, uint64_t> comm;
  for (auto& [rank, per_comm] : bytes) comm[rank] = analysis::busiest_comm(per_comm);
  std::map<int, std::vector<BucketCall>> out;
  reader.for_each_collective(
      [&](const CollectiveRecord& c) {
        if (c.comm_id == comm[c.rank])
          out[c.rank].push_back({analysis::execution_start(c), analysis::execution_end(c), c.seq});
      },
      "op = 'allreduce'");
  for (auto& [rank, calls] : out)
    std::sort(calls.begin(), calls.end(), [](auto& x, auto& y) { return x.start < y.start; });
  return out;
}

// Bucket j of a steady iteration is its j-th DDP all-reduce in issue (seq)
// order; an iteration holds the calls starting in [start_ns, end_ns) as
// analyze_run found it (for the last one, end_ns is its last bucket's end).
// Iterations whose call count differs from the layout are left out.
std::vector<Metric> bucket_metrics(store::RunReader& reader, const analysis::RunAnalysis& run) {
  std::vector<Metric> out;
  for (const auto& b : run.buckets) {
    std::string index = std::to_string(b.index);
    out.push_back({"bucket",
                   "bucket " + index + " " + std::to_string(b.bytes),
                   "bucket " + index + " (" + human_bytes(double(b.bytes)) + ") time",
                   "us",
                   Better::lower,
                   1.0,
                   {}});
  }
  auto ddp = ddp_calls(reader);
  std::vector<BucketCall> in;
  for (const auto& it : run.iteration_list) {
    if (it.warmup || size_t(it.buckets) != out.size()) continue;
    const auto& calls = ddp[it.rank];
    auto first = std::lower_bound(calls.begin(), calls.end(), it.start_ns,
                                  [](const BucketCall& c, int64_t t) { return c.start < t; });
    in.clear();
    for (auto c = first; c != calls.end() && c->start < it.end_ns; ++c) in.push_back(*c);
    if (in.size() != out.size()) continue;
    std::sort(in.begin(), in.end(), [](auto& x, auto& y) { return x.seq < y.seq; });
    for (size_t j = 0; j < in.size(); ++j)
      out[j].samples.push_back(double(in[j].end - in[j].start) / 1e3);
  }
  return out;
}

// Per call, busbw = bytes x nccl-tests' factor / duration (bytes per ns = GB/s),
// grouped by op, size and ranks. Zero-byte calls (barriers) have no bandwidth.
std::vector<Metric> busbw_metrics(store::RunReader& reader) {
  std::map<std::tuple<Op, uint64_t, int>, Metric> classes;
  reader.for_each_collective([&](const CollectiveRecord& c) {
    int64_t ns = analysis::execution_end(c) - analysis::execution_start(c);
    if (c.bytes == 0 || ns <= 0) return;
    auto [it, fresh] = classes.try_emplace({c.op, c.bytes, c.nranks});
    Metric& m = it->second;
    if (fresh) {
      std::string op(name_of(c.op));
      m = {"busbw",
           "busbw " + op + " " + std::to_string(c.bytes) + " x" + std::to_string(c.nranks),
           // Exact bytes: DDP's buckets often differ by less than human_bytes shows.
           "busbw " + op + " " + std::to_string(c.bytes) + " B (" + std::to_string(c.nranks) +
               " ranks)",
           "GB/s",
           Better::higher,
           1e-6,
           {}};
    }
    m.samples.push_back(double(c.bytes) * busbw_factor(c.op, c.nranks) / double(ns));
  });
  std::vector<Metric> out;
  for (auto& [key, m] : classes) out.push_back(std::move(m));
  return out;
}

std::string unit_key(const analysis::RunAnalysis& run, const analysis::FsdpRootStats& root,
                     const analysis::FsdpUnitStats& u) {
  return analysis::unit_name(u) + analysis::of_root(root, run.fsdp.size());
}

// FSDP: per unit, the exposed time of its all-gathers per step, every rank's
// steady steps.
std::vector<Metric> fsdp_metrics(const analysis::RunAnalysis& run) {
  std::vector<Metric> out;
  for (const auto& root : run.fsdp)
    for (const auto& u : root.units) {
      if (u.all_gather_exposed_us.empty()) continue;
      std::string name = unit_key(run, root, u);
      out.push_back({"fsdp", "fsdp " + name, "FSDP unit " + name + ": all-gathers exposed per step",
                     "us", Better::lower, 1.0, u.all_gather_exposed_us});
    }
  return out;
}

// FSDP's units and what they all-gather each step, for the identity.
std::pair<std::string, uint64_t> fsdp_units(const analysis::RunAnalysis& run) {
  std::string names;
  uint64_t bytes = 0;
  for (const auto& root : run.fsdp)
    for (const auto& u : root.units) {
      names += (names.empty() ? "" : ", ") + unit_key(run, root, u);
      for (const auto& p : u.phases)
        if (p.phase == FsdpRegionKind::forward_all_gather) bytes += p.bytes;
    }
  return {names, bytes};
}

std::string bucket_layout(const analysis::RunAnalysis& run) {
  std::string s;
  for (const auto& b : run.buckets) s += (s.empty() ? "" : ", ") + human_bytes(double(b.bytes));
  return s;
}

}  // namespace

RunMetrics recorded_metrics(store::RunReader& reader) {
  auto run = analysis::analyze_run(reader);
  if (run.buckets.empty() && run.fsdp.empty())
    throw InputError(reader.path() +
                     ": no steady DDP training iterations found (no repeating all-reduce "
                     "pattern) and no FSDP units: nothing to compare");
  uint64_t grad_bytes = 0;
  for (const auto& b : run.buckets) grad_bytes += b.bytes;
  RunMetrics out;
  out.path = out.source = reader.path();
  out.kind = "recorded run";
  out.identity = {{"world size", std::to_string(run.world_size)},
                  {"backend", run.backend},
                  {"gradient bytes per iteration",
                   human_bytes(double(grad_bytes)) + " (" + std::to_string(grad_bytes) + " B)"}};
  out.facts = {{"buckets per iteration", std::to_string(run.buckets.size())},
               {"bucket sizes", bucket_layout(run)}};
  if (!run.fsdp.empty()) {
    auto [names, bytes] = fsdp_units(run);
    out.identity.push_back({"FSDP bytes all-gathered per forward",
                            human_bytes(double(bytes)) + " (" + std::to_string(bytes) + " B)"});
    out.facts.push_back({"FSDP units", names});
  }
  out.metrics.push_back(per_iteration(run, "comm", "communication per iteration",
                                      &analysis::IterationStats::comm_ms));
  out.metrics.push_back(per_iteration(run, "exposed", "exposed communication per iteration",
                                      &analysis::IterationStats::exposed_ms));
  for (auto& m : bucket_metrics(reader, run)) out.metrics.push_back(std::move(m));
  for (auto& m : busbw_metrics(reader)) out.metrics.push_back(std::move(m));
  for (auto& m : fsdp_metrics(run)) out.metrics.push_back(std::move(m));
  return out;
}

}  // namespace ddpscope::regression
