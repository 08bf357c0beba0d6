#include "profiler/analysis/kernel_overlap.h"

#include <cmath>

namespace ddpscope::analysis {

double KernelOverlap::pct() const {
  return comm_ns > 0 ? 100.0 * double(overlapped_ns) / double(comm_ns) : NAN;
}

bool device_span_without_kernels(const CollectiveRecord& c) {
  return (c.timing == Timing::event || c.timing == Timing::kernel_channels) &&
         c.start_ns != kNoTime && c.end_ns != kNoTime;
}

KernelOverlap kernel_overlap(std::vector<Interval> comm, const std::vector<Interval>& compute) {
  KernelOverlap o;
  for (const auto& i : union_of(std::move(comm))) {
    o.comm_ns += i.length();
    o.overlapped_ns += covered(compute, i);
  }
  return o;
}

}  // namespace ddpscope::analysis
