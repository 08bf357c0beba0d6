#include "profiler/analysis/hang_watch.h"

#include <algorithm>

namespace ddpscope::analysis {

bool HangWatch::stuck(const std::vector<RankGlance>& ranks, int64_t now_wall_ns) {
  int64_t last_end = INT64_MIN, first_wait = INT64_MAX;
  int waiting = 0;
  for (const auto& g : ranks) {
    last_end = std::max(last_end, g.last_end_wall);
    first_wait = std::min(first_wait, g.first_inflight_wall);
    waiting += g.inflight > 0;
  }
  if (waiting == 0) return false;
  // Nothing completed yet: the wait itself is the stall.
  int64_t since = last_end == INT64_MIN ? first_wait : std::max(last_end, first_wait);
  double stalled = double(now_wall_ns - since) / 1e9;
  if (stalled < after_s_) return false;
  stalled_s_ = stalled;
  waiting_ = waiting;
  return true;
}

}  // namespace ddpscope::analysis
