#include "reports/regression/recorded_metrics.h"

#include <cstdio>
#include <map>

#include "profiler/analysis/analyze.h"
#include "profiler/core/vocab.h"
#include "reports/text_summary.h"

namespace ddpscope::regression {
namespace {

constexpr double kMsFloor = 1e-3;  // 1 us: below what host timing resolves meaningfully

int64_t start_of(const CollectiveRecord& c) {
  return c.start_ns != kNoTime ? c.start_ns : c.host_start_ns;
}
int64_t end_of(const CollectiveRecord& c) { return c.end_ns != kNoTime ? c.end_ns : c.host_end_ns; }

Metric per_iteration(const analysis::RunAnalysis& run, const std::string& family,
                     const std::string& label, double analysis::IterationStats::*field) {
  Metric m{family, family, label, "ms", Better::lower, kMsFloor, {}};
  for (const auto& it : run.iteration_list)  // rank by rank, in iteration order
    if (!it.warmup) m.samples.push_back(it.*field);
  return m;
}

// The DDP communicator of a rank, as analyze_run picks it: most all-reduce bytes.
std::map<int, uint64_t> ddp_comms(const std::vector<CollectiveRecord>& allreduces) {
  std::map<int, std::map<uint64_t, uint64_t>> bytes;
  for (const auto& c : allreduces) bytes[c.rank][c.comm_id] += c.bytes;
  std::map<int, uint64_t> out;
  for (auto& [rank, per_comm] : bytes) {
    uint64_t most = 0;
    for (auto& [comm, b] : per_comm)
      if (b >= most) most = b, out[rank] = comm;
  }
  return out;
}

// Bucket j of a steady iteration is its j-th DDP all-reduce in issue (seq)
// order; an iteration spans [start_ns, end_ns) as analyze_run found it.
// Iterations whose call count differs from the layout are left out.
std::vector<Metric> bucket_metrics(store::RunReader& reader, const analysis::RunAnalysis& run) {
  std::vector<Metric> out;
  for (const auto& b : run.buckets) {
    std::string size = reports::human_bytes(double(b.bytes));
    out.push_back({"bucket",
                   "bucket " + std::to_string(b.index) + " " + std::to_string(b.bytes),
                   "bucket " + std::to_string(b.index) + " (" + size + ") time",
                   "us",
                   Better::lower,
                   1.0,
                   {}});
  }
  auto allreduces = reader.collectives("op = 'allreduce'");
  auto comm = ddp_comms(allreduces);
  std::map<int, std::vector<const CollectiveRecord*>> ddp;
  for (const auto& c : allreduces)
    if (c.comm_id == comm[c.rank]) ddp[c.rank].push_back(&c);
  for (auto& [rank, calls] : ddp)
    std::sort(calls.begin(), calls.end(), [](auto* a, auto* b) { return a->seq < b->seq; });
  for (const auto& it : run.iteration_list) {
    if (it.warmup || size_t(it.buckets) != out.size()) continue;
    std::vector<const CollectiveRecord*> in;
    for (const auto* c : ddp[it.rank])
      if (start_of(*c) >= it.start_ns && (start_of(*c) < it.end_ns || it.end_ns == end_of(*c)))
        in.push_back(c);
    if (in.size() != out.size()) continue;
    for (size_t j = 0; j < in.size(); ++j)
      out[j].samples.push_back(double(end_of(*in[j]) - start_of(*in[j])) / 1e3);
  }
  return out;
}

// Per call, busbw = bytes x nccl-tests' factor / duration (bytes per ns = GB/s),
// grouped by op, size and ranks. Zero-byte calls (barriers) have no bandwidth.
std::vector<Metric> busbw_metrics(store::RunReader& reader) {
  std::map<std::tuple<Op, uint64_t, int>, Metric> classes;
  reader.for_each_collective([&](const CollectiveRecord& c) {
    int64_t ns = end_of(c) - start_of(c);
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

std::string bucket_layout(const analysis::RunAnalysis& run) {
  std::string s;
  for (const auto& b : run.buckets)
    s += (s.empty() ? "" : ", ") + reports::human_bytes(double(b.bytes));
  return s;
}

}  // namespace

RunMetrics recorded_metrics(store::RunReader& reader) {
  auto run = analysis::analyze_run(reader);
  if (run.buckets.empty())
    throw InputError(reader.path() +
                     ": no steady DDP training iterations found (no repeating all-reduce "
                     "pattern): nothing to compare");
  uint64_t grad_bytes = 0;
  for (const auto& b : run.buckets) grad_bytes += b.bytes;
  RunMetrics out;
  out.source = reader.path();
  out.kind = "recorded run";
  out.identity = {{"world size", std::to_string(run.world_size)},
                  {"backend", run.backend},
                  {"gradient bytes per iteration", reports::human_bytes(double(grad_bytes)) + " (" +
                                                       std::to_string(grad_bytes) + " B)"}};
  out.facts = {{"buckets per iteration", std::to_string(run.buckets.size())},
               {"bucket sizes", bucket_layout(run)}};
  out.metrics.push_back(per_iteration(run, "comm", "communication per iteration",
                                      &analysis::IterationStats::comm_ms));
  out.metrics.push_back(per_iteration(run, "exposed", "exposed communication per iteration",
                                      &analysis::IterationStats::exposed_ms));
  for (auto& m : bucket_metrics(reader, run)) out.metrics.push_back(std::move(m));
  for (auto& m : busbw_metrics(reader)) out.metrics.push_back(std::move(m));
  return out;
}

}  // namespace ddpscope::regression
