#include "record/stacks.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "profiler/core/rank_env.h"

namespace fs = std::filesystem;

namespace ddpscope::record {

int stack_signal() { return SIGRTMIN + 3; }

int request_stacks(const std::string& dir, const std::vector<analysis::RankGlance>& ranks,
                   int signal, int wait_ms) {
  std::vector<fs::path> asked;
  std::string host = rank_env::host_name();
  for (const auto& g : ranks) {
    fs::path dump = fs::path(dir) / ("stacks-" + std::to_string(g.pid) + ".txt");
    std::error_code ec;
    if (g.host != host || !fs::exists(dump, ec)) continue;  // no hook registered there
    if (kill(pid_t(g.pid), signal) == 0) asked.push_back(dump);
  }
  for (int waited = 0; waited < wait_ms; waited += 20) {
    bool all = std::all_of(asked.begin(), asked.end(), [](const fs::path& p) {
      std::error_code ec;
      return fs::file_size(p, ec) > 0;
    });
    if (all) break;
    usleep(20000);
  }
  return int(asked.size());
}

}  // namespace ddpscope::record
