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

// A few columns by hand: the kernels of a large run are millions.
std::map<int, std::vector<Interval>> comm_kernels(store::RunReader& reader) {
  std::string sql =
      "SELECT rank, start_ns, end_ns FROM kernels WHERE kind = 'comm' AND start_ns IS NOT NULL "
      "AND end_ns IS NOT NULL";
  std::string filter = reader.filter_sql(store::Row<KernelRecord>::table());
  if (!filter.empty()) sql += " AND " + filter;
  std::map<int, std::vector<Interval>> out;
  store::Statement st(reader.connection(), sql);
  while (st.step()) out[int(st.int64(0))].push_back({st.time(1), st.time(2)});
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
