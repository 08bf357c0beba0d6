// The one interface every output format implements (Caliper's formatter
// idea): given the analysis of a run (and the run's database, for formats that
// show raw events), write the output to a target path. A renderer writes to a
// temporary file and renames it into place, so a failure never leaves a
// half-written report behind. Errors are std::runtime_error with one line that
// names the target.
#pragma once

#include <memory>
#include <string>

#include "profiler/analysis/run_analysis.h"
#include "profiler/store/reader.h"

namespace ddpscope::reports {

struct ReportInput {
  const analysis::RunAnalysis& run;
  store::RunReader& reader;  // the same run, for raw events (trace)
};

class Renderer {
 public:
  virtual ~Renderer() = default;
  // `target`: a file, or for CSV a directory (created if missing).
  virtual void write(const ReportInput& input, const std::string& target) = 0;
};

std::unique_ptr<Renderer> make_csv_renderer();   // reports/csv.cpp: one RFC 4180 file per table
std::unique_ptr<Renderer> make_json_renderer();  // reports/json.cpp: the contract in DESIGN.md
std::unique_ptr<Renderer>
make_trace_renderer();  // reports/trace.cpp: Chrome trace events (Perfetto)
std::unique_ptr<Renderer> make_html_renderer();  // reports/html.cpp: one self-contained page

}  // namespace ddpscope::reports
