#include "profiler/analysis/mismatches.h"

#include <algorithm>

namespace ddpscope::analysis {
namespace {

// Counts that may differ (all-gather's v-variants) do not split a shape.
bool same_shape(const Mismatch::Shape& a, const store::CallShape& b) {
  return a.op == b.op && a.dtype == b.dtype && (a.count == b.count || !op_is(b.op, kSameCount));
}

}  // namespace

std::vector<Mismatch> find_mismatches(store::RunReader& reader) {
  // The reader gives one row per (communicator, seq, shape) with its ranks; a
  // seq with more than one shape is a mismatch.
  std::vector<Mismatch> out;
  Mismatch cur;
  auto close = [&] {
    if (cur.shapes.size() > 1) out.push_back(cur);
  };
  for (const store::CallShape& s : reader.call_shapes()) {
    if (cur.shapes.empty() || s.comm_id != cur.comm_id || s.seq != cur.seq) {
      close();
      cur = Mismatch{s.comm_id, s.seq, {}};
    }
    auto same = std::find_if(cur.shapes.begin(), cur.shapes.end(),
                             [&](const Mismatch::Shape& o) { return same_shape(o, s); });
    if (same == cur.shapes.end())
      cur.shapes.push_back({s.ranks, s.op, s.dtype, s.count});
    else
      same->ranks.insert(same->ranks.end(), s.ranks.begin(), s.ranks.end());
  }
  close();
  for (auto& m : out)
    for (auto& s : m.shapes) std::sort(s.ranks.begin(), s.ranks.end());
  return out;
}

}  // namespace ddpscope::analysis
