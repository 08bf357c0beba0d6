// Watching a job while it runs (`record`'s live line and --metrics-file):
// the report's own analysis over a sliding window of the rank files (kept by
// record: record/window.h, record/live_view.h), plus what a window alone
// cannot tell — how many steps each rank completed since the job began.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "profiler/analysis/run_analysis.h"
#include "profiler/store/reader.h"

namespace ddpscope::analysis {

// One rank over the window (medians of its steady steps), and its totals.
struct LiveRank {
  int rank = 0;
  std::string host;
  uint64_t steps = 0;  // completed since the job began
  double step_ms = 0, comm_ms = 0, exposed_ms = 0;
  double late_ms = 0;                            // straggle_ms() over the window
  uint64_t dropped_events = 0;                   // since the job began
  double fsdp_comm_ms = 0, fsdp_exposed_ms = 0;  // FSDP's per step; 0 without FSDP
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
  explicit LiveWatch(double window_s) : window_ns_(int64_t(window_s * 1e9)) {}
  // Where the window begins when it ends at `now_wall_ns`.
  int64_t since(int64_t now_wall_ns) const { return now_wall_ns - window_ns_; }
  // One look at the window (the rank files' rows from since(now) on, every
  // rank on the wall timeline), ending at `now_wall_ns`. `ended`: the job is
  // over, so each rank's last step is complete too. What the look at the
  // files saw and cost (files, unreadable, refresh_ms) is the caller's to fill.
  LiveFigures& analyse(store::RunReader& window, int64_t now_wall_ns, bool ended);
  const LiveFigures& last() const { return figures_; }

 private:
  void count_steps(int64_t run_start_ns, bool ended);

  int64_t window_ns_;
  std::map<int, uint64_t> steps_;         // by rank
  std::map<int, int64_t> counted_up_to_;  // by rank: the start of its last counted step
  LiveFigures figures_;
};

}  // namespace ddpscope::analysis
