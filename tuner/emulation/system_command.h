// Running `ip` and `tc` as child processes (execv, no shell): the one way the
// emulation changes the network, so every change is a command a person can
// read and repeat by hand.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace ddpscope::tuner::emulation {

// The absolute path of `program` on PATH or in /usr/sbin, /sbin (where
// iproute2 lives, often missing from a user's PATH); "" when not found.
std::string find_program(const std::string& program);

// Runs argv[0] (an absolute path) with argv; throws EmulationError with the
// command line and the first line of its stderr when it does not exit 0.
void run_command(const std::vector<std::string>& argv);

// The command running now, or 0: a signal handler stops it before cleaning up,
// so that an `ip netns add` half way through cannot outlive the cleanup.
pid_t running_command();

}  // namespace ddpscope::tuner::emulation
