// Per-operation figures over a run: how many calls each rank made, how many
// bytes they moved, how long they took, and the bandwidth that implies
// (algbw and busbw exactly as nccl-tests defines them).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "profiler/core/vocab.h"
#include "profiler/store/reader.h"

namespace ddpscope::analysis {

struct OpSummary {
  Op op = Op::allreduce;
  int ranks = 0;         // ranks that issued this op
  uint64_t calls = 0;    // calls over all ranks
  uint64_t bytes = 0;    // bytes over all ranks (nccl-tests' S per call)
  double total_ms = 0;   // summed duration over all ranks
  double median_us = 0;  // median duration of one call
  double p95_us = 0;
  double algbw_gbps = 0;         // sum(S) / sum(t), GB/s (1e9 bytes)
  double busbw_gbps = 0;         // sum(S * factor(op, n)) / sum(t)
  Timing timing = Timing::none;  // the best timing source among the calls
};

// Duration of one collective: its measured execution interval when it has one,
// else the host API call.
double duration_ns(const CollectiveRecord& c);

// When a collective ran: each end of its measured execution interval where
// known, else that end of the host API call.
inline int64_t execution_start(const CollectiveRecord& c) {
  return c.start_ns != kNoTime ? c.start_ns : c.host_start_ns;
}
inline int64_t execution_end(const CollectiveRecord& c) {
  return c.end_ns != kNoTime ? c.end_ns : c.host_end_ns;
}

std::vector<OpSummary> summarize_ops(store::RunReader& reader);

// The same, fed one collective at a time (for callers already streaming).
class OpSummarizer {
 public:
  OpSummarizer();
  ~OpSummarizer();
  void add(const CollectiveRecord& c);
  std::vector<OpSummary> finish();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// The same over an in-memory set (tests, benchmarks).
std::vector<OpSummary> summarize_ops(const std::vector<CollectiveRecord>& collectives);

}  // namespace ddpscope::analysis
