#include "injector/runtime/stream_order.h"

#include <algorithm>

namespace ddpscope::inject {

StreamOrder::StreamKey StreamOrder::key_of(const CollectiveRecord& c) {
  constexpr uint64_t kLastSpecialHandle = 2;  // 0 and cudaStreamLegacy: per device; 2: per thread
  if (c.stream > kLastSpecialHandle) return {c.stream, 0, 0};
  return {c.stream, c.comm_id, c.tid};
}

void StreamOrder::completed(const CollectiveRecord& c, uint64_t correlation) {
  Completed& s = streams_[key_of(c)];
  s.latest_call_start = std::max(s.latest_call_start, c.host_start_ns);
  uint64_t& latest = s.latest_by_tid[c.tid];
  latest = std::max(latest, correlation);
}

// Launched before a completed collective, surely: by the same thread with an
// earlier correlation (ids are taken in call order, a group's at its launching
// ncclGroupEnd), or, by any thread, a call outside a group (which launches
// inside the call) that returned before the completed one was called. A
// grouped call launches at its group's end, at a time the record does not
// hold, so only its own thread's order places it.
bool StreamOrder::followed(const CollectiveRecord& c, uint64_t correlation) const {
  auto s = streams_.find(key_of(c));
  if (s == streams_.end()) return false;
  auto same_thread = s->second.latest_by_tid.find(c.tid);
  if (same_thread != s->second.latest_by_tid.end() && same_thread->second > correlation)
    return true;
  return c.group_id == 0 && c.host_end_ns < s->second.latest_call_start;
}

}  // namespace ddpscope::inject
