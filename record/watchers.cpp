#include "record/watchers.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "profiler/analysis/analyze.h"
#include "profiler/core/clock.h"
#include "profiler/store/launch_account.h"
#include "profiler/store/merge.h"
#include "profiler/store/reader.h"
#include "record/stacks.h"
#include "record/window.h"
#include "reports/sections/hangs.h"

namespace fs = std::filesystem;

namespace ddpscope::record {
namespace {

// The run so far: the rank files merged into a scratch database (removed
// after), with what record knew beside them, and analysed.
analysis::RunAnalysis analyse_so_far(const std::string& dir) {
  std::string scratch = (fs::path(dir) / ".so-far.db").string();
  std::error_code ec;
  fs::remove(scratch, ec);
  store::merge_rank_files(store::find_rank_files(dir), scratch, store::read_launch_account(dir));
  analysis::RunAnalysis run;
  {
    store::RunReader reader(scratch);
    run = analysis::analyze_run(reader);
  }
  fs::remove(scratch, ec);
  return run;
}

}  // namespace

Watchers::Watchers(std::string dir, double hang_after_s, std::unique_ptr<LivePublisher> live)
    : dir_(std::move(dir)), live_(std::move(live)) {
  if (hang_after_s > 0) hangs_.emplace(hang_after_s);
}

// Interrupted, or the job stuck: the ranks' stacks first, while they can
// answer.
void Watchers::install(core::LaunchSpec& spec, int flush_ms) {
  std::string dir = dir_;
  spec.before_forward = [dir](int) { request_stacks(dir, glance_rank_files(dir), stack_signal()); };
  if (!hangs_ && !live_) return;
  spec.watch_ms = std::clamp(flush_ms, 50, live_ ? 250 : 1000);
  spec.watch = [this] { return look(); };
}

// A live look, when one is due, glances at the rank files for the hang watch
// too; otherwise the hang watch glances on its own.
bool Watchers::look() {
  bool looked = false;
  try {
    looked = live_ && live_->tick();
  } catch (const std::exception& e) {  // the job goes on; the next look may do
    fprintf(stderr, "ddpscope: live view: %s\n", e.what());
  }
  if (!hangs_) return false;
  return stuck(looked ? live_->glances() : glance_rank_files(dir_));
}

bool Watchers::stuck(const std::vector<analysis::RankGlance>& ranks) {
  if (!hangs_->stuck(ranks, clock::wall_ns())) return false;
  fprintf(stderr,
          "ddpscope: no collective completed for %.1f s while %d rank(s) wait in one: "
          "stopping the job (--hang-after)\n",
          hangs_->stalled_s(), hangs_->waiting_ranks());
  request_stacks(dir_, ranks, stack_signal());
  try {
    reports::print_hangs(analyse_so_far(dir_), std::cerr);
  } catch (const std::exception& e) {
    std::cerr << "ddpscope: no diagnosis: " << e.what() << "\n";
  }
  return true;
}

void Watchers::finish() {
  try {
    if (live_) live_->finish();
  } catch (const std::exception& e) {  // the job's end and its merge matter more
    fprintf(stderr, "ddpscope: metrics file: %s\n", e.what());
  }
}

}  // namespace ddpscope::record
