// Running a real program for a test: extra environment, captured stdout and
// stderr, the exit status as a shell reports it, and a way to signal it once it
// has said something.
#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

namespace ddpscope::testing {

struct Result {
  int status = -1;  // exit code, or 128+signal
  std::string out, err;
};

class Process {
 public:
  Process(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env);
  ~Process();
  // Blocks until stdout has produced a line equal to `line` (or the program ended).
  bool wait_for_line(const std::string& line, int timeout_ms = 30000);
  void signal(int sig);
  Result wait();

 private:
  pid_t pid_ = -1;
  std::string out_path_, err_path_;
};

Result run(const std::vector<std::string>& argv,
           const std::map<std::string, std::string>& env = {});

// A fresh empty directory under the system's temp area, removed when the
// process that made it exits (DDPSCOPE_KEEP_TEST_DIRS=1 keeps it).
std::string temp_dir(const std::string& name);

}  // namespace ddpscope::testing
