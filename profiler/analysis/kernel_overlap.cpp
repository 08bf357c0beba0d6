#include "profiler/analysis/kernel_overlap.h"

#include <cmath>

namespace ddpscope::analysis {

double KernelOverlap::pct() const {
  return comm_ns > 0 ? 100.0 * double(overlapped_ns) / double(comm_ns) : NAN;
}

std::map<int, std::vector<Interval>> device_comm(store::RunReader& reader) {
  std::map<int, std::vector<Interval>> out;
  reader.for_each<KernelRecord>(
      [&](const KernelRecord& k) {
        out[k.rank].push_back({k.start_ns, k.end_ns});
      },
      "kind = 'comm' AND start_ns IS NOT NULL AND end_ns IS NOT NULL");
  // A CUPTI-timed collective's kernels are rows above; these have none.
  reader.for_each_collective(
      [&](const CollectiveRecord& c) {
        out[c.rank].push_back({c.start_ns, c.end_ns});
      },
      "timing IN ('event', 'kernel_channels') AND start_ns IS NOT NULL AND end_ns IS NOT NULL");
  return out;
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
