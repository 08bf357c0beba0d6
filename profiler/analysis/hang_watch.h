// Whether a job is stuck, from a glance at each of its rank files while it
// runs (`record --hang-after S`): a job whose ranks have collectives in
// flight and none of which completed a collective for S seconds is stuck.
// The glances come from record's one reader of the rank files
// (record/window.h); what record does then (the ranks' Python stacks, the
// diagnosis of the run so far, stopping the job) is record's
// (record/watchers.h).
#pragma once

#include <climits>
#include <cstdint>
#include <string>
#include <vector>

namespace ddpscope::analysis {

// A few rows of one rank file, on the wall clock (its monotonic times moved
// by its clock offset).
struct RankGlance {
  int64_t pid = 0;
  std::string host;
  int64_t last_end_wall = INT64_MIN;        // its newest completed collective
  int64_t first_inflight_wall = INT64_MAX;  // its oldest collective in flight
  int inflight = 0;
};

class HangWatch {
 public:
  explicit HangWatch(double after_s) : after_s_(after_s) {}
  // One look: true when some rank has a collective in flight and no rank
  // completed one for after_s seconds before `now_wall_ns`.
  bool stuck(const std::vector<RankGlance>& ranks, int64_t now_wall_ns);
  double stalled_s() const { return stalled_s_; }  // at the last stuck() that said true
  int waiting_ranks() const { return waiting_; }

 private:
  double after_s_;
  double stalled_s_ = 0;
  int waiting_ = 0;
};

}  // namespace ddpscope::analysis
