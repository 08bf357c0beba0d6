// When `record` looks at the rank files while the job runs, and what it does
// with each look (live_view.h): the live line (reports/live.h), to whoever
// draws it (a terminal's last row, or plain lines on a pipe), and the metrics
// file, rewritten atomically (core/atomic_file.h) so a scraper never reads
// half. One look serves both when both are due.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "record/live_view.h"

namespace ddpscope::record {

// `record`'s flags for it (docs/watching.md).
struct LiveOptions {
  std::optional<double> line_every_s;  // unset: every second on a terminal, else none
  std::string metrics_file;            // empty: none
  double metrics_every_s = 15;
  double window_s = 30;
  // Throws InputError (one line naming the flag) for a value out of range, or
  // a metrics file that cannot be written.
  void check() const;
};

class LivePublisher {
 public:
  using LineSink = std::function<void(const std::string& line)>;
  // Null when nothing is asked for (no line, no metrics file). `dir`: the
  // recording's folder, whose name is the metrics' job label.
  static std::unique_ptr<LivePublisher> make(const std::string& dir, const LiveOptions& options,
                                             bool on_terminal, LineSink line);
  // Called often: looks at the rank files when the line or the file is due;
  // true when it looked (then glances() are this look's).
  bool tick();
  const std::vector<analysis::RankGlance>& glances() const { return view_.glances(); }
  // The job ended: one last look, and the metrics file of the whole job.
  void finish();

 private:
  LivePublisher(const std::string& dir, const LiveOptions& options, double line_every_s,
                LineSink line);
  void write_metrics();

  LiveView view_;
  LiveOptions options_;
  double line_every_s_;
  LineSink line_;
  std::string job_;
  std::chrono::steady_clock::time_point began_ = std::chrono::steady_clock::now();
  double next_line_s_ = 0, next_metrics_s_ = 0;
};

}  // namespace ddpscope::record
