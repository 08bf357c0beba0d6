// Every look record takes while the ranks run, in one (docs/watching.md,
// docs/hangs.md): the live view's (live_publisher.h) and the hang watch's
// (profiler/analysis/hang_watch.h), both fed by one read of the rank files
// (window.h) when both are due; and the ranks' Python stacks (stacks.h) when
// record is interrupted, or when the job is stuck: record then says where
// the job stopped before ending it as torchrun would (SIGTERM, then SIGKILL).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "profiler/analysis/hang_watch.h"
#include "profiler/core/rank_launcher.h"
#include "record/live_publisher.h"

namespace ddpscope::record {

class Watchers {
 public:
  // `hang_after_s`: 0 for no hang watch; `live`: null for no live view.
  Watchers(std::string dir, double hang_after_s, std::unique_ptr<LivePublisher> live);
  // The stacks before a forwarded signal; with a hang watch or a live view,
  // a look every flush interval (at least 50 ms; at most 250 ms with a live
  // view, else 1 s). The launch must end before this object does.
  void install(core::LaunchSpec& spec, int flush_ms);
  // The job ended: the live view's last look and metrics file.
  void finish();

 private:
  bool look();  // true stops the job
  bool stuck(const std::vector<analysis::RankGlance>& ranks);

  std::string dir_;
  std::optional<analysis::HangWatch> hangs_;
  std::unique_ptr<LivePublisher> live_;
};

}  // namespace ddpscope::record
