#include "record/stacks.h"

#include <signal.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>

#include "profiler/core/rank_env.h"

namespace fs = std::filesystem;

namespace ddpscope::record {

int stack_signal() { return SIGRTMIN + 3; }

namespace {

uintmax_t size_of(const fs::path& p) {
  std::error_code ec;
  uintmax_t n = fs::file_size(p, ec);
  return ec ? 0 : n;
}

}  // namespace

int request_stacks(const std::string& dir, const std::vector<analysis::RankGlance>& ranks,
                   int signal, int wait_ms) {
  std::vector<fs::path> asked;
  std::vector<uintmax_t> before;  // a dump appends to the rank's earlier ones
  std::string host = rank_env::host_name();
  for (const auto& g : ranks) {
    fs::path dump = fs::path(dir) / ("stacks-" + std::to_string(g.pid) + ".txt");
    std::error_code ec;
    if (g.host != host || !fs::exists(dump, ec)) continue;  // no hook registered there
    uintmax_t size = size_of(dump);
    if (kill(pid_t(g.pid), signal) == 0) asked.push_back(dump), before.push_back(size);
  }
  if (asked.empty()) return 0;
  // A dump is done when it has begun and stopped growing: faulthandler
  // writes it frame by frame from the rank's signal handler, and a rank the
  // machine's load preempts mid-dump would leave a file cut before the job's
  // own frames.
  std::vector<uintmax_t> sizes = before;
  for (int waited = 0, still = 0; waited < wait_ms && still < 2; waited += 20) {
    usleep(20000);
    bool done = true;
    for (size_t i = 0; i < asked.size(); ++i) {
      uintmax_t now = size_of(asked[i]);
      done = done && now > before[i] && now == sizes[i];
      sizes[i] = now;
    }
    still = done ? still + 1 : 0;
  }
  return int(asked.size());
}

}  // namespace ddpscope::record
