// Starting a command once, or as N local ranks with the variables torchrun
// would set (rank_env.h), forwarding signals to it, and reporting its exit
// status the way a shell would. The one launcher: `ddpscope record --nproc`
// starts the user's job with it, `tune` its own ranks (tuner/sweep_launch.h).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "profiler/core/records.h"

namespace ddpscope::core {

// Local ranks one launch may start (`record --nproc`, `tune --nproc`): far
// beyond any machine's GPUs or cores, and a typo of 100000 is not a fork bomb.
constexpr int kMaxLocalRanks = 1024;

struct LaunchSpec {
  std::vector<std::string> argv;
  int nproc = 0;                           // 0: run the command once, as it is
  std::map<std::string, std::string> env;  // added to (or replacing in) the environment
  // Runs in each rank's process before exec (e.g. to enter the rank's network
  // namespace); returns false after printing why, and the rank exits 127.
  std::function<bool(int rank)> in_child;
  // Called every watch_ms while the ranks run (0: never); true stops them
  // (SIGTERM, then SIGKILL), as after a rank failed: a hang found, say.
  std::function<bool()> watch;
  int watch_ms = 0;
  // Runs in the launcher's own flow (not in the signal handler) when a signal
  // to forward arrives, before the ranks get it: e.g. to ask them for their
  // stacks while they can still answer. Unset: forwarded from the handler.
  std::function<void(int sig)> before_forward;
};

// Runs the command(s) and returns the exit status to pass on: the command's
// own; with nproc, the first non-zero rank status (the other ranks are then
// stopped, as torchrun does); 128+N for death by signal N; 127 if it can't start.
// A signal handler the caller installed before still runs, after the signal is
// passed on to the command. `ends`, if given, gets how each rank ended (in
// rank order; the command run once is rank 0).
int launch_and_wait(const LaunchSpec& spec, std::vector<RankExitRecord>* ends = nullptr);

// A TCP port on 127.0.0.1 that was free a moment ago (for MASTER_PORT).
int free_port();

}  // namespace ddpscope::core
