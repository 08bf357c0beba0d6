// Python's faulthandler dump of every thread (`record` asks the ranks of a
// stopped job for one: docs/hangs.md), read as frames "file:line in function".
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace ddpscope::analysis {

// The main thread's frames in a faulthandler dump of all threads, innermost
// first, at most `most`: the thread whose outermost frame is a module's top
// level (the script), else the one faulthandler calls current.
std::vector<std::string> main_thread_frames(const std::string& dump, size_t most = 8);

// Whether a frame is the job's own code, not Python's library, an installed
// package (torch) or ddpscope's start-up hook.
bool users_code(const std::string& frame);

}  // namespace ddpscope::analysis
