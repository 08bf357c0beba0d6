// The ranks' Python stacks, asked for by signal: when record is interrupted
// (before the signal is passed on) and when its hang watch finds the job
// stuck (watchers.h). The stacks are read into the run by every merge
// (profiler/store/launch_account.h; docs/hangs.md).
#pragma once

#include <string>
#include <vector>

#include "profiler/analysis/hang_watch.h"

namespace ddpscope::record {

// The signal on which a rank's Python start-up hook dumps its stacks
// (DDPSCOPE_STACK_SIGNAL): a real-time one no job uses by accident, sent only
// to processes whose hook registered for it.
int stack_signal();

// Sends `signal` to each rank process of this host (`ranks`: the glance at
// each rank file of `dir`, window.h) whose start-up hook registered for it
// (DIR/stacks-<pid>.txt exists), then waits up to `wait_ms` for their dumps
// to be appended and stop growing (unchanged over two looks 20 ms apart).
// Returns how many were asked.
int request_stacks(const std::string& dir, const std::vector<analysis::RankGlance>& ranks,
                   int signal, int wait_ms = 2000);

}  // namespace ddpscope::record
