// record's live view of a job while it runs (its live line and
// --metrics-file): one refresh of the window over the rank files
// (window.h), the window's analysis (profiler/analysis/live_watch.h), and
// what that look saw and cost. It lives in record's process, never in the
// ranks, and reads each rank file's new rows only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "profiler/analysis/hang_watch.h"
#include "profiler/analysis/live_watch.h"
#include "record/window.h"

namespace ddpscope::record {

class LiveView {
 public:
  // `scratch`: a private path for the window database (window.h).
  LiveView(const std::string& dir, double window_s, const std::string& scratch)
      : window_(dir, scratch), watch_(window_s) {}
  // One look at the rank files, the window ending at `now_wall_ns`.
  // `ended`: the job is over, so each rank's last step is complete too.
  const analysis::LiveFigures& refresh(int64_t now_wall_ns, bool ended = false);
  const analysis::LiveFigures& last() const { return watch_.last(); }
  // The glance at each readable rank file the last refresh took (the hang
  // watch's look: one read of the files serves both).
  const std::vector<analysis::RankGlance>& glances() const { return glances_; }

 private:
  RecordingWindow window_;
  analysis::LiveWatch watch_;
  std::vector<analysis::RankGlance> glances_;
};

}  // namespace ddpscope::record
