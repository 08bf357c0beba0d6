#include "profiler/analysis/hang_watch.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <filesystem>
#include <vector>

#include "profiler/analysis/analyze.h"
#include "profiler/core/clock.h"
#include "profiler/core/rank_env.h"
#include "profiler/store/launch_account.h"
#include "profiler/store/merge.h"
#include "profiler/store/reader.h"
#include "profiler/store/schema.h"
#include "profiler/store/sqlite.h"

namespace fs = std::filesystem;

namespace ddpscope::analysis {
namespace {

struct RankGlance {
  int64_t pid = 0;
  std::string host;
  int64_t last_end_wall = INT64_MIN;        // its newest completed collective
  int64_t first_inflight_wall = INT64_MAX;  // its oldest collective in flight
  int inflight = 0;
};

// A few rows of one rank file; false when it cannot be read now (being
// created, or locked by a writer on a network file system).
bool glance(const std::string& path, RankGlance& g) {
  try {
    store::Connection c(path, store::Connection::Mode::read_only);
    store::Statement p(c, "SELECT pid, host, clock_offset_ns FROM processes LIMIT 1");
    if (!p.step()) return false;
    g.pid = p.int64(0);
    g.host = p.text(1);
    int64_t offset = p.int64(2);
    store::Statement last(c,
                          "SELECT max(host_end_ns) FROM (SELECT host_end_ns FROM collectives "
                          "ORDER BY id DESC LIMIT 64)");
    if (last.step() && !last.is_null(0)) g.last_end_wall = last.int64(0) + offset;
    if (!store::has_table(c, "inflight")) return true;
    store::Statement in(c, "SELECT count(*), min(host_start_ns) FROM inflight");
    if (in.step() && in.int64(0) > 0) {
      g.inflight = int(in.int64(0));
      g.first_inflight_wall = in.int64(1) + offset;
    }
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

std::vector<RankGlance> glance_all(const std::string& dir) {
  std::vector<RankGlance> out;
  for (const auto& f : store::find_rank_files(dir)) {
    RankGlance g;
    if (glance(f, g)) out.push_back(g);
  }
  return out;
}

}  // namespace

int stack_signal() { return SIGRTMIN + 3; }

bool HangWatch::stuck() {
  auto ranks = glance_all(dir_);
  int64_t last_end = INT64_MIN, first_wait = INT64_MAX;
  int waiting = 0;
  for (const auto& g : ranks) {
    last_end = std::max(last_end, g.last_end_wall);
    first_wait = std::min(first_wait, g.first_inflight_wall);
    waiting += g.inflight > 0;
  }
  if (waiting == 0) return false;
  int64_t now = clock::wall_ns();
  // Nothing completed yet: the wait itself is the stall.
  int64_t since = last_end == INT64_MIN ? first_wait : std::max(last_end, first_wait);
  double stalled = double(now - since) / 1e9;
  if (stalled < after_s_) return false;
  stalled_s_ = stalled;
  waiting_ = waiting;
  return true;
}

int request_stacks(const std::string& dir, int signal, int wait_ms) {
  std::vector<fs::path> asked;
  std::string host = rank_env::host_name();
  for (const auto& g : glance_all(dir)) {
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

RunAnalysis analyse_so_far(const std::string& dir) {
  std::string scratch = (fs::path(dir) / ".so-far.db").string();
  std::error_code ec;
  fs::remove(scratch, ec);
  store::merge_rank_files(store::find_rank_files(dir), scratch, store::read_launch_account(dir));
  RunAnalysis run;
  {
    store::RunReader reader(scratch);
    run = analyze_run(reader);
  }
  fs::remove(scratch, ec);
  return run;
}

}  // namespace ddpscope::analysis
