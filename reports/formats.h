// The file formats `ddpscope report` writes, one entry each: its flag and
// help line, its renderer, and the check of its output. The CLI declares one
// flag per entry (in this order, which is report --help's), checks every
// output it was given before the analysis, and writes them (write_reports).
// Adding a format is its renderer (a file or folder here, its make_*_renderer
// in renderer.h) and one entry in formats.cpp (docs/architecture.md).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "reports/renderer.h"

namespace ddpscope::reports {

struct ReportFormat {
  const char* flag;  // "--html"
  std::string help;  // its line in report --help
  std::unique_ptr<Renderer> (*make)();
  // Throws InputError (exit 2), one line naming the target and what is wrong
  // with it, when the target cannot take the output: called before the
  // analysis so a typo costs nothing; the renderer checks again as it writes.
  void (*check)(const std::string& target);
  // Its renderer reads the run's rows (ReportInput::reader), not only the
  // analysis; and walks every collective (ReportInput::collectives), which
  // the analysis then keeps for it.
  bool reads_run = false;
  bool walks_collectives = false;
};

const std::vector<ReportFormat>& report_formats();

// Whether any format asked for (`targets`, as write_reports takes them)
// walks every collective: then the analysis keeps what it read
// (AnalysisOptions::keep_collectives).
bool walks_collectives(const std::vector<std::string>& targets);

// Writes the formats asked for: `targets` holds one per report_formats()
// entry, "" where not asked for. Those that read only the analysis (HTML,
// CSV, JSON) are written on a thread of their own while those that read the
// run write theirs: on two cores the JSON's document and the trace's
// encoding overlap (docs/performance.md). Returns, in format order, each
// target written with its renderer's note: "TARGET" or "TARGET (NOTE)".
// Rethrows the first failure, in format order, once every writer stopped.
std::vector<std::string> write_reports(const ReportInput& input,
                                       const std::vector<std::string>& targets);

// The check of an output that is a directory of files (CSV, Kineto): a
// directory we can write in, or a new one the renderer can create: in an
// existing, writable directory, or with `parents` (CSV, which makes missing
// parents too) under one. `layout` says why it must be a directory, e.g.
// "CSV output is one file per table".
void check_output_dir(const std::string& dir, const std::string& layout, bool parents);

}  // namespace ddpscope::reports
