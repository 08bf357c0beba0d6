// Finding training iterations in one rank's stream of DDP all-reduces.
//
// DDP reduces the same buckets, in the same order, every iteration once it has
// rebuilt them (from the second iteration on), so the bucket sizes repeat with
// a period equal to the buckets per iteration. The period comes from the sizes
// (ordered by seq, i.e. issue order, which Gloo's worker threads may not keep
// when executing); the phase, i.e. which bucket starts an iteration, from the
// time gaps: the gap before an iteration's first bucket spans the forward pass
// and the optimizer step. Calls before the first steady iteration (DDP's
// single-bucket first iteration) form the warm-up iteration; calls after the
// last one (a final loss all-reduce) belong to no iteration. NVTX step ranges,
// when the job has them, override all of this.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "profiler/analysis/intervals.h"
#include "profiler/analysis/run_analysis.h"
#include "profiler/core/records.h"
#include "profiler/core/vocab.h"

namespace ddpscope::analysis {

// A collective as the analysis needs it: compact, so a million fit easily.
struct Call {
  int64_t id = 0;                              // collectives.id
  int64_t host_start = 0, start = 0, end = 0;  // ns; start/end is the execution
  uint64_t bytes = 0, seq = 0, comm_id = 0;
  int32_t rank = 0, nranks = 0;
  Op op = Op::allreduce;
  // Filled from DDP's own account (ddp_account.h) where there is one.
  int32_t instance = -1;  // the DDP instance that issued it
  int32_t bucket = -1;    // ddp_bucket: DDP's bucket index
  uint32_t group = 0;     // ddp_bucket: the backward pass (or join shadow step) it belongs to
  CollectiveRole role = CollectiveRole::unknown;
  bool shadow = false;  // issued by a joined rank shadowing the others
  uint32_t shape = 0;   // its (op, dtype, count) in the run's ShapeTable (mismatches.h)
};

// A collective as the iteration split sees it (its execution interval).
Call call_of(const CollectiveRecord& c);

struct Iteration {
  size_t first = 0, count = 0;  // a run of calls (indices into the seq-ordered list)
  bool warmup = false;
  bool shadow = false;  // join(): a joined rank's shadow of the others' step
};

struct IterationSplit {
  std::vector<Iteration> iterations;
  std::vector<uint64_t> pattern;  // bucket bytes of a steady iteration, in DDP order
};

// The communicator DDP reduces gradients on: the one with the most all-reduce
// bytes (the first such id on a tie; 0 when there is none).
uint64_t busiest_comm(const std::map<uint64_t, uint64_t>& allreduce_bytes_by_comm);

// The fundamental period of a size sequence: the smallest shift at which it
// repeats nearly everywhere it can. 0 when it does not repeat.
size_t find_period(const std::vector<uint64_t>& sizes);

// `calls`: one rank's all-reduces on the DDP communicator, in seq order.
IterationSplit split_iterations(const std::vector<Call>& calls);

// With NVTX step ranges (sorted, disjoint): calls grouped by the range holding
// their host start; the first range is warm-up if its bucket sizes differ.
IterationSplit split_by_ranges(const std::vector<Call>& calls, const std::vector<Interval>& steps);

}  // namespace ddpscope::analysis
