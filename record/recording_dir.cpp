#include "record/recording_dir.h"

#include <unistd.h>

#include <ctime>
#include <filesystem>

#include "profiler/core/input_error.h"
#include "profiler/core/rank_env.h"
#include "profiler/store/completion.h"
#include "profiler/store/launch_account.h"
#include "profiler/store/merge.h"

namespace fs = std::filesystem;

namespace ddpscope::record {
namespace {

void merge_now(const std::string& dir, const std::vector<std::string>& files, std::ostream& log) {
  if (!store::claim_merge(dir)) {
    log << "ddpscope: another host is merging " << dir << "\n";
    return;
  }
  std::string out = (fs::path(dir) / "run.db").string();
  try {
    auto s = store::merge_rank_files(files, out, store::read_launch_account(dir));
    log << "ddpscope: recorded " << s.ranks << (s.ranks == 1 ? " rank, " : " ranks, ")
        << s.collectives << " collectives -> " << out;
    if (s.dropped_events) log << " (" << s.dropped_events << " events dropped)";
    log << "\n";
  } catch (const std::exception& e) {
    log << "ddpscope: could not merge the rank files: " << e.what() << " (they stay in " << dir
        << ")\n";
  }
}

}  // namespace

std::string default_recording_dir() {
  char buf[64];
  time_t now = time(nullptr);
  tm local{};
  localtime_r(&now, &local);
  strftime(buf, sizeof buf, "ddpscope-%Y%m%d-%H%M%S", &local);
  return buf;
}

void check_recording_dir(const std::string& dir) {
  std::error_code ec;
  if (!fs::exists(dir, ec)) return;
  if (!fs::is_directory(dir, ec)) throw InputError(dir + ": exists and is not a directory");
  if (fs::exists(fs::path(dir) / "run.db") || fs::exists(fs::path(dir) / ".merge-claim") ||
      store::holds_finished_rank_file(dir, rank_env::host_name()))
    throw InputError(dir + ": already holds a recording; choose another -o or remove it");
}

bool prepare_recording_dir(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  return !ec && access(dir.c_str(), W_OK | X_OK) == 0;
}

void merge_recording(const std::string& dir, int nproc, std::ostream& log) {
  auto done = store::check_completion(dir, rank_env::host_name());
  if (done.files.empty()) {
    log << "ddpscope: nothing recorded (the command made no NCCL, Gloo, CUDA wait or NVTX calls)\n";
    return;
  }
  if (nproc > 0) {
    if (auto missing = store::ranks_without_file(dir, nproc); !missing.empty())
      log << "ddpscope: no file from rank" << (missing.size() > 1 ? "s " : " ")
          << store::rank_list(missing) << " of " << nproc << "; merging the others\n";
    merge_now(dir, store::find_rank_files(dir), log);
    return;
  }
  if (!done.complete) {
    log << "ddpscope: " << done.ranks << " of " << done.world_size << " ranks recorded in " << dir
        << (done.unfinished ? ", " + std::to_string(done.unfinished) + " still writing" : "")
        << "; the host whose ranks finish last merges (or run `ddpscope merge " << dir
        << "` once the job is done)\n";
    return;
  }
  merge_now(dir, done.files, log);
}

void finish_recording(const std::string& dir, int nproc, const std::vector<RankExitRecord>& ends,
                      std::ostream& log) {
  if (nproc > 0) try {
      store::write_rank_exits(dir, ends);
    } catch (const std::exception& e) {
      log << "ddpscope: cannot keep how the ranks ended: " << e.what() << "\n";
    }
  merge_recording(dir, nproc, log);
}

}  // namespace ddpscope::record
