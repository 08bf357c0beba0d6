// The text of a Kineto trace's events, as libkineto writes them: one event a
// line, "X" complete events with "ts"/"dur" in microseconds with three
// decimals (exact nanoseconds from the trace's origin), "ac2g" flow arrows,
// "M" process and thread names. Buffered and flushed every megabyte, so a
// rank of millions of kernels never sits in memory.
#pragma once

#include <cstdint>
#include <ostream>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "reports/trace/trace_events.h"

namespace ddpscope::reports::kineto {

class EventText {
 public:
  EventText(std::ostream& os, int64_t origin_ns) : os_(os), origin_(origin_ns) {}

  // Text before the first event (the trace's metadata) and after the last.
  std::string& raw() { return buf_; }

  // The args of the next complete event.
  void arg(const trace::Arg& a) { args_.push_back(a); }

  // A complete event with the args given since the last one. An unknown or
  // earlier end is a zero duration.
  void complete(const char* cat, std::string_view name, int64_t pid, int64_t tid, int64_t start,
                int64_t end);
  // Kineto's launch-to-kernel arrow: 's' at the launch, 'f' (bound to the
  // enclosing slice) at the kernel.
  void flow(char ph, uint64_t id, int64_t pid, int64_t tid, int64_t ts);
  // "process_name" or "thread_name".
  void meta(const char* what, int64_t pid, int64_t tid, const std::string& name);

  void flush();

  int64_t last_end_ns() const { return last_ns_; }  // of every complete event so far
  const std::set<std::pair<int64_t, int64_t>>& tracks() const { return tracks_; }  // (pid, tid)

 private:
  std::string& next();
  void pid_tid_ts(int64_t pid, int64_t tid, int64_t ts);

  static constexpr size_t kFlushAt = 1 << 20;
  std::ostream& os_;
  int64_t origin_;
  int64_t last_ns_ = INT64_MIN;
  uint64_t events_ = 0;
  std::string buf_;
  std::vector<trace::Arg> args_;
  std::set<std::pair<int64_t, int64_t>> tracks_;
};

}  // namespace ddpscope::reports::kineto
