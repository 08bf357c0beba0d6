// `ddpscope record`: run a command (or --nproc local ranks of it) with the
// injector preloaded (environment.h), watch it while it runs (watchers.h),
// then keep how its ranks ended and merge their files (recording_dir.h).
// cli/record_command.cpp declares the flags.
#pragma once

#include <string>
#include <vector>

#include "record/live_publisher.h"

namespace ddpscope::record {

struct RecordOptions {
  std::string out_dir;  // empty: ddpscope-<YYYYmmdd-HHMMSS>
  int nproc = 0;        // 0: the command runs once, as it is
  int flush_ms = 200;
  bool no_cupti = false, no_nvtx = false, no_python_hook = false, no_nccl_plugin = false;
  double hang_after_s = 0;  // 0: off
  LiveOptions live;
  std::vector<std::string> command;
  // stderr is a terminal that may be drawn on: the live line goes on its last
  // row (status_row.h), and is on by default.
  bool on_terminal = false;
};

// The command's own exit status (the first failed rank's with --nproc; 128+N
// for death by signal N). Bad options throw InputError, before anything runs.
int run(RecordOptions& options);

}  // namespace ddpscope::record
