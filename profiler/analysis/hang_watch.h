// Watching a recording while the job runs (`record --hang-after S`): a job
// whose ranks have collectives in flight and none of which completed a
// collective for S seconds is stuck. Reads the rank files read-only, a few
// rows each (the newest collectives, the inflight table, the process row),
// never blocking their writers (SQLite WAL readers; a file on a network file
// system, written under an exclusive lock, is skipped: docs/hangs.md).
// Then the stuck ranks are asked for their Python stacks, and the run so far
// is analysed for the diagnosis (hangs.h).
#pragma once

#include <string>

#include "profiler/analysis/run_analysis.h"

namespace ddpscope::analysis {

// The signal on which a rank's Python start-up hook dumps its stacks
// (DDPSCOPE_STACK_SIGNAL): a real-time one no job uses by accident, sent only
// to processes whose hook registered for it.
int stack_signal();

class HangWatch {
 public:
  HangWatch(std::string dir, double after_s) : dir_(std::move(dir)), after_s_(after_s) {}
  // One look at the rank files: true when some rank has a collective in
  // flight and no rank completed one for after_s seconds (both on the wall
  // clock, each rank's monotonic times moved by its clock offset).
  bool stuck();
  double stalled_s() const { return stalled_s_; }  // at the last stuck() that said true
  int waiting_ranks() const { return waiting_; }

 private:
  std::string dir_;
  double after_s_;
  double stalled_s_ = 0;
  int waiting_ = 0;
};

// Sends `signal` to each rank process of this host whose start-up hook
// registered for it (DIR/stacks-<pid>.txt exists), then waits up to
// `wait_ms` for their dumps. Returns how many were asked.
int request_stacks(const std::string& dir, int signal, int wait_ms = 2000);

// The run so far: the rank files merged into a scratch database (removed
// after), with what record knew beside them, and analysed.
RunAnalysis analyse_so_far(const std::string& dir);

}  // namespace ddpscope::analysis
