#include "profiler/analysis/op_summary.h"

#include <algorithm>
#include <array>
#include <set>

#include "profiler/core/stats.h"

namespace ddpscope::analysis {
// Named, not anonymous: OpSummarizer::State, which has external linkage,
// holds these (gcc warns of an anonymous type there when the file is
// compiled inside a unity batch).
namespace op_totals {

struct Accumulator {
  std::set<int32_t> ranks;
  uint64_t calls = 0, bytes = 0;
  double total_ns = 0, bus_bytes = 0;
  std::vector<float> durations_ns;  // float: bounded memory for millions of calls
  Timing timing = Timing::none;

  void add(const CollectiveRecord& c) {
    double d = duration_ns(c);
    ranks.insert(c.rank);
    ++calls;
    bytes += c.bytes;
    total_ns += d;
    bus_bytes += double(c.bytes) * busbw_factor(c.op, c.nranks);
    durations_ns.push_back(float(d));
    timing = std::max(timing, c.timing);
  }
};

}  // namespace op_totals

namespace {

using op_totals::Accumulator;

OpSummary finish(Op op, Accumulator& a) {
  OpSummary s;
  s.op = op;
  s.ranks = int(a.ranks.size());
  s.calls = a.calls;
  s.bytes = a.bytes;
  s.total_ms = a.total_ns / 1e6;
  // In place: a run can hold millions of calls.
  s.median_us = stats::quantile_in_place(std::span<float>(a.durations_ns), 0.5) / 1e3;
  s.p95_us = stats::quantile_in_place(std::span<float>(a.durations_ns), 0.95) / 1e3;
  if (a.total_ns > 0) {
    s.algbw_gbps = double(a.bytes) / a.total_ns;  // bytes/ns == GB/s
    s.busbw_gbps = a.bus_bytes / a.total_ns;
  }
  s.timing = a.timing;
  return s;
}

std::vector<OpSummary> finish_all(std::array<Accumulator, size_t(Op::kCount)>& acc) {
  std::vector<OpSummary> out;
  for (size_t i = 0; i < acc.size(); ++i)
    if (acc[i].calls) out.push_back(finish(Op(i), acc[i]));
  std::sort(out.begin(), out.end(),
            [](const OpSummary& a, const OpSummary& b) { return a.total_ms > b.total_ms; });
  return out;
}

}  // namespace

double duration_ns(const CollectiveRecord& c) {
  if (c.start_ns != kNoTime && c.end_ns != kNoTime) return double(c.end_ns - c.start_ns);
  if (c.host_start_ns != kNoTime && c.host_end_ns != kNoTime)
    return double(c.host_end_ns - c.host_start_ns);
  return 0;
}

struct OpSummarizer::State {
  std::array<op_totals::Accumulator, size_t(Op::kCount)> acc;
};

OpSummarizer::OpSummarizer() : state_(std::make_unique<State>()) {}
OpSummarizer::~OpSummarizer() = default;
void OpSummarizer::add(const CollectiveRecord& c) { state_->acc[size_t(c.op)].add(c); }
std::vector<OpSummary> OpSummarizer::finish() { return finish_all(state_->acc); }

std::vector<OpSummary> summarize_ops(store::RunReader& reader) {
  OpSummarizer s;
  reader.for_each_collective([&](const CollectiveRecord& c) { s.add(c); });
  return s.finish();
}

std::vector<OpSummary> summarize_ops(const std::vector<CollectiveRecord>& collectives) {
  OpSummarizer s;
  for (const auto& c : collectives) s.add(c);
  return s.finish();
}

}  // namespace ddpscope::analysis
