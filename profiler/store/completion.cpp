#include "profiler/store/completion.h"

#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <set>

#include "profiler/core/shared_fs.h"
#include "profiler/store/merge.h"
#include "profiler/store/reader.h"

namespace ddpscope::store {
namespace {

bool process_gone(int64_t pid) { return pid > 0 && kill(pid_t(pid), 0) != 0 && errno == ESRCH; }

// Finished: closed by its writer, or its writer was on this host and is gone.
// A file that cannot be read yet (a network FS writer holds its lock) is not.
// The world size counts processes only where a launcher's variable gave the
// rank (RANK and its kin): a rank taken from a communicator belongs to a
// process that may hold several ranks of it (ncclCommInitAll), and one taken
// from the pid to a job with no world at all; then 0 (unknown).
bool finished(const std::string& path, const std::string& this_host, int& world_size, int& rank) {
  try {
    RunReader r(path);
    auto procs = r.processes();
    if (procs.size() != 1) return false;
    bool launched = procs[0].rank_source != "comm" && procs[0].rank_source != "pid";
    world_size = launched ? procs[0].world_size : 0;
    rank = procs[0].rank;
    if (r.meta().count("closed")) return true;
    return procs[0].host == this_host && process_gone(procs[0].pid);
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace

Completion check_completion(const std::string& dir, const std::string& this_host) {
  Completion c;
  c.files = find_rank_files(dir);
  std::set<int> ranks;
  for (const auto& f : c.files) {
    int world = 0, rank = -1;
    if (!finished(f, this_host, world, rank)) ++c.unfinished;
    if (rank >= 0) ranks.insert(rank);
    c.world_size = std::max(c.world_size, world);
  }
  c.ranks = int(ranks.size());
  if (c.world_size == 0) c.world_size = c.ranks;  // no launcher: the files are the world
  c.complete = !c.files.empty() && c.unfinished == 0 && c.ranks >= c.world_size;
  return c;
}

bool holds_finished_rank_file(const std::string& dir, const std::string& this_host) {
  for (const auto& f : find_rank_files(dir)) {
    int world = 0, rank = -1;
    if (finished(f, this_host, world, rank)) return true;
  }
  return false;
}

std::vector<int> ranks_without_file(const std::string& dir, int nproc) {
  std::error_code ec;
  std::vector<int> out;
  for (int r = 0; r < nproc; ++r)
    if (!std::filesystem::exists(dir + "/rank-" + std::to_string(r) + ".db", ec)) out.push_back(r);
  return out;
}

std::string rank_list(const std::vector<int>& ranks) {
  std::string s;
  for (int r : ranks) s += (s.empty() ? "" : ", ") + std::to_string(r);
  return s;
}

bool claim_merge(const std::string& dir) { return core::claim_file(dir + "/.merge-claim"); }

}  // namespace ddpscope::store
