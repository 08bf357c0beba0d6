#include "profiler/analysis/collective_overlap.h"

#include "profiler/analysis/intervals.h"
#include "profiler/analysis/rank_view.h"

namespace ddpscope::analysis {

std::vector<CollectiveOverlap> collective_overlap(store::RunReader& reader,
                                                  const std::string& where) {
  auto compute = std::move(kernel_intervals(reader).compute);
  for (auto& [rank, intervals] : compute) intervals = union_of(std::move(intervals));

  std::vector<CollectiveOverlap> out;
  reader.for_each_collective(
      [&](const CollectiveRecord& c) {
        auto it = compute.find(c.rank);
        if (it == compute.end() || c.start_ns == kNoTime || c.end_ns == kNoTime) return;
        CollectiveOverlap o{c.id, c.rank, c.end_ns - c.start_ns, 0, 0};
        o.hidden_ns = covered(it->second, {c.start_ns, c.end_ns});
        if (o.duration_ns > 0) o.overlap_pct = 100.0 * double(o.hidden_ns) / double(o.duration_ns);
        out.push_back(o);
      },
      where);
  return out;
}

}  // namespace ddpscope::analysis
