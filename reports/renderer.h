// The one interface every output format implements (Caliper's formatter
// idea): given the analysis of a run (and the run's database, for formats that
// show raw events), write the output to a target path. A renderer writes to a
// temporary file and renames it into place, so a failure never leaves a
// half-written report behind. Errors are std::runtime_error with one line that
// names the target.
#pragma once

#include <memory>
#include <string>

#include "profiler/analysis/collective_labels.h"
#include "profiler/analysis/run_analysis.h"
#include "profiler/store/reader.h"

namespace ddpscope::reports {

struct ReportInput {
  const analysis::RunAnalysis& run;
  store::RunReader& reader;  // the same run, for raw events (trace)
  // The collectives the analysis read (AnalysisOptions::keep_collectives),
  // which the trace then need not read again; null: read from `reader`.
  const CollectiveRuns* collectives = nullptr;
  // Who issued each collective (AnalysisOptions::keep_labels), which names
  // the trace's slices; null: slices named by their op alone.
  const analysis::CollectiveLabels* labels = nullptr;
};

class Renderer {
 public:
  virtual ~Renderer() = default;
  // `target`: a file, or for CSV a directory (created if missing).
  virtual void write(const ReportInput& input, const std::string& target) = 0;
  // What the last write() chose that the user should know (the trace's
  // format); empty if nothing.
  virtual std::string note() const { return {}; }
};

std::unique_ptr<Renderer> make_csv_renderer();  // reports/csv.cpp: one RFC 4180 file per table
// Throws InputError naming `dir` when it cannot take the CSV files (formats.h:
// check_output_dir); the renderer creates it, parents included.
void check_csv_dir(const std::string& dir);
std::unique_ptr<Renderer> make_json_renderer();   // reports/json.cpp: one document of the analysis
std::unique_ptr<Renderer> make_trace_renderer();  // reports/trace/trace_format.cpp: see below
std::unique_ptr<Renderer> make_html_renderer();   // reports/html/html.cpp: one self-contained page
// One PyTorch-profiler (Kineto) trace per rank in a directory, for HTA
// (reports/kineto/kineto_trace.h, docs/trace.md).
std::unique_ptr<Renderer> make_kineto_renderer();

// The trace for ui.perfetto.dev (reports/trace/, docs/trace.md): the
// same tracks, slices and args in either format. Perfetto's protobuf
// (TrackEvent packets) is under a tenth of the JSON's size on the benchmark's
// run (docs/trace.md); the Chrome trace-event JSON is plain text, which
// chrome://tracing and any script also read.
enum class TraceFormat { json, perfetto };

// Runs with more event rows than this get the protobuf when the file name
// does not decide: at ~140 bytes of JSON per event that is ~140 MB of JSON,
// which viewers parse slowly and with far more memory per event (a 900 MB
// JSON trace crashed ui.perfetto.dev: google/perfetto#99).
constexpr int64_t kJsonTraceMaxRows = 1'000'000;

// The format of `--trace F`: `.pftrace`, `.perfetto-trace` or `.pb` is the
// protobuf, `.json` the JSON (any letter case); any other name is the protobuf
// when `event_rows` (collectives, kernels, NVTX ranges and syncs, see
// trace_events.h) exceeds kJsonTraceMaxRows, the JSON otherwise.
// `json_max_rows` is kJsonTraceMaxRows but where a test moves the boundary
// (a run of a million rows takes a minute to write in a sanitized build).
TraceFormat trace_format_for(const std::string& target, int64_t event_rows,
                             int64_t json_max_rows = kJsonTraceMaxRows);
// The trace renderer with the JSON's boundary at `json_max_rows` event rows
// (make_trace_renderer's is kJsonTraceMaxRows).
std::unique_ptr<Renderer> make_trace_renderer_up_to(int64_t json_max_rows);

}  // namespace ddpscope::reports
