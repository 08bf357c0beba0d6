// Per rank, how much of the communication on the GPU ran while compute did:
// the definition of HTA's (Holistic Trace Analysis) get_comm_comp_overlap, so
// the figure in `report --json` can be checked against HTA reading the
// `report --kineto` trace (docs/analysis.md). Unions, never sums: two compute
// kernels on two streams over the same microsecond count it once.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "profiler/analysis/intervals.h"
#include "profiler/store/reader.h"

namespace ddpscope::analysis {

struct KernelOverlap {
  int64_t comm_ns = 0;        // union of the rank's device communication
  int64_t overlapped_ns = 0;  // the part of it a compute kernel ran through
  // overlapped / comm in percent; NaN when the rank has no device communication.
  double pct() const;
};

// Device communication is a rank's kernels of kind `comm` and, for each
// collective timed on the device without kernel rows, its device span:
// CUDA events or NCCL's profiler plugin timed it (a CUPTI-timed collective's
// kernels are rows of their own; a host-timed one never reached a device
// timer).
bool device_span_without_kernels(const CollectiveRecord& c);

// One rank's figure: `comm` its device communication, `compute` the union
// (union_of) of its compute kernels on every stream.
KernelOverlap kernel_overlap(std::vector<Interval> comm, const std::vector<Interval>& compute);

}  // namespace ddpscope::analysis
