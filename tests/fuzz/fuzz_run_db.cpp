// A run or rank database (`report`, `check`, `tune --workload RUN.db`): the
// input is written as the file and read as the commands read it — the reader
// and its checks, the analysis, the terminal report, the JSON and trace
// renderers, check's metrics (compared with themselves) and the workload the
// tuner would replay.
#include <sstream>

#include "profiler/analysis/analyze.h"
#include "profiler/regression/decision.h"
#include "profiler/regression/metrics.h"
#include "profiler/store/reader.h"
#include "reports/renderer.h"
#include "reports/text_analysis.h"
#include "reports/text_summary.h"
#include "tests/fuzz/fuzz_support.h"
#include "tuner/workload_from_run.h"

using namespace ddpscope;

namespace {

void report(const std::string& path) {
  store::RunReader reader(path);
  const auto run = analysis::analyze_run(reader);
  std::ostringstream out;
  reports::RunOverview overview{path, run.command, reader.processes(), reader.count("collectives")};
  reports::print_overview(overview, out);
  reports::print_op_table(run.ops, out);
  reports::print_analysis(run, out);
  const std::string target = fuzz::ScratchFile::sibling("report.out");
  for (auto make : {reports::make_json_renderer, reports::make_trace_renderer})
    make()->write({run, reader}, target);
  fuzz::ScratchFile::remove_with_side_files(target);
}

// Every metric is loaded; one family is decided (the bootstrap behind each
// verdict is arithmetic over samples, not parsing, and would dominate the time).
void check(const std::string& path) {
  const auto runs = regression::load_run_metrics(path);
  regression::CheckOptions options;
  options.min_samples = 2;
  options.families = {"iter"};
  regression::check(runs, runs, options);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::ScratchFile db("run.db", data, size);
  fuzz::refusing_bad_input([&] { report(db.path()); });
  fuzz::refusing_bad_input([&] { check(db.path()); });
  fuzz::refusing_bad_input([&] { tuner::workload_from_run(db.path()); });
  return 0;
}
