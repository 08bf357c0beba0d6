// Watching a job while it runs (`record`'s live line and --metrics-file):
// the report's own analysis over a sliding window of the rank files
// (store/window.h), refreshed on demand, plus what a window alone cannot
// tell — how many steps each rank completed since the job began. It lives in
// record's process, never in the ranks, and reads each rank file's new rows
// only.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "profiler/analysis/run_analysis.h"
#include "profiler/store/window.h"

namespace ddpscope::analysis {

// One rank over the window (medians of its steady steps), and its totals.
struct LiveRank {
  int rank = 0;
  std::string host;
  uint64_t steps = 0;  // completed since the job began
  double step_ms = 0, comm_ms = 0, exposed_ms = 0;
  double late_ms = 0;           // straggle_ms() over the window
  uint64_t dropped_events = 0;  // since the job began
};

struct LiveFigures {
  int64_t since_ns = 0, until_ns = 0;  // the window, wall clock
  int files = 0, unreadable = 0;       // rank files, and those unreadable now
  double refresh_ms = 0;               // what the last look cost record
  // The window as `report --since/--until` analyses the same rows.
  RunAnalysis window;
  std::vector<LiveRank> ranks;
  uint64_t steps = 0;  // steps every rank completed (the fewest of any rank)
};

class LiveWatch {
 public:
  // `scratch`: a private path for the window database (store/window.h).
  LiveWatch(const std::string& dir, double window_s, const std::string& scratch);
  // One look at the rank files, the window ending at `now_wall_ns`.
  // `ended`: the job is over, so each rank's last step is complete too.
  const LiveFigures& refresh(int64_t now_wall_ns, bool ended = false);
  const LiveFigures& last() const { return figures_; }

 private:
  void count_steps(int64_t run_start_ns, bool ended);

  store::RecordingWindow window_;
  int64_t window_ns_;
  std::map<int, uint64_t> steps_;         // by rank
  std::map<int, int64_t> counted_up_to_;  // by rank: the start of its last counted step
  LiveFigures figures_;
};

}  // namespace ddpscope::analysis
