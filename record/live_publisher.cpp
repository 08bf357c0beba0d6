#include "record/live_publisher.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "profiler/core/atomic_file.h"
#include "profiler/core/clock.h"
#include "profiler/core/input_error.h"
#include "reports/live.h"

namespace fs = std::filesystem;

namespace ddpscope::record {

void LiveOptions::check() const {
  if (line_every_s && !(*line_every_s >= 0 && *line_every_s <= 86400))
    throw InputError("--live-every must be from 0 (off) to 86400 seconds");
  if (!(metrics_every_s >= 0.1 && metrics_every_s <= 86400))
    throw InputError("--metrics-every must be from 0.1 to 86400 seconds");
  if (!(window_s >= 1 && window_s <= 86400))
    throw InputError("--window must be from 1 to 86400 seconds");
  if (!metrics_file.empty()) core::check_output_path(metrics_file);
}

std::unique_ptr<LivePublisher> LivePublisher::make(const std::string& dir,
                                                   const LiveOptions& options, bool on_terminal,
                                                   LineSink line) {
  double line_every_s = options.line_every_s.value_or(on_terminal ? 1.0 : 0.0);
  if (line_every_s <= 0 && options.metrics_file.empty()) return nullptr;
  return std::unique_ptr<LivePublisher>(
      new LivePublisher(dir, options, line_every_s, std::move(line)));
}

// The window database lives in the temporary folder: private, local, and
// never mistaken for a rank file of the recording.
LivePublisher::LivePublisher(const std::string& dir, const LiveOptions& options,
                             double line_every_s, LineSink line)
    : view_(dir, options.window_s,
            (fs::temp_directory_path() / ("ddpscope-live-" + std::to_string(getpid()) + ".db"))
                .string()),
      options_(options),
      line_every_s_(line_every_s),
      line_(std::move(line)),
      job_(fs::absolute(dir).lexically_normal().filename().string()) {}

bool LivePublisher::tick() {
  double now_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - began_).count();
  bool line = line_every_s_ > 0 && now_s >= next_line_s_;
  bool metrics = !options_.metrics_file.empty() && now_s >= next_metrics_s_;
  if (!line && !metrics) return false;
  const auto& live = view_.refresh(clock::wall_ns());
  // A look that takes long (many rank files) comes less often: the watcher
  // keeps to a fifth of one core, whatever the intervals asked.
  double spacing = 5 * live.refresh_ms / 1e3;
  if (line) {
    line_(reports::live_line(live));
    next_line_s_ = now_s + std::max(line_every_s_, spacing);
  }
  if (metrics) {
    write_metrics();
    next_metrics_s_ = now_s + std::max(options_.metrics_every_s, spacing);
  }
  return true;
}

void LivePublisher::finish() {
  if (options_.metrics_file.empty()) return;
  view_.refresh(clock::wall_ns(), true);
  write_metrics();
}

void LivePublisher::write_metrics() {
  core::write_atomically(options_.metrics_file, [&](std::ostream& out) {
    reports::write_prometheus(view_.last(), job_, out);
  });
}

}  // namespace ddpscope::record
