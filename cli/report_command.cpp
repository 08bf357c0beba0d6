// `ddpscope report RUN.db [--html F] [--csv DIR] [--json F] [--trace F]`: the
// run at a glance on the terminal, and any of the file formats.
#include <iostream>

#include "cli/commands.h"
#include "profiler/analysis/analyze.h"
#include "profiler/core/atomic_file.h"
#include "profiler/store/reader.h"
#include "reports/renderer.h"
#include "reports/text_analysis.h"
#include "reports/text_summary.h"

namespace ddpscope::cli {
namespace {

struct ReportArgs {
  std::string path, html, csv, json, trace;
  bool quiet = false;
};

int run_report(const ReportArgs& a) {
  // Outputs first: a typo in one should not cost a long analysis.
  for (const auto* target : {&a.html, &a.json, &a.trace})
    if (!target->empty()) core::check_output_path(*target);
  store::RunReader reader(a.path);
  auto run = analysis::analyze_run(reader);
  if (!a.quiet) {
    reports::RunOverview overview;
    overview.path = a.path;
    overview.command = run.command;
    overview.processes = reader.processes();
    overview.collectives = reader.count("collectives");
    reports::print_overview(overview, std::cout);
    reports::print_op_table(run.ops, std::cout);
    std::cout << "\n";
    reports::print_analysis(run, std::cout);
  }
  struct Output {
    const std::string& target;
    std::unique_ptr<reports::Renderer> (*make)();
  } outputs[] = {{a.csv, reports::make_csv_renderer},
                 {a.json, reports::make_json_renderer},
                 {a.trace, reports::make_trace_renderer},
                 {a.html, reports::make_html_renderer}};
  for (const auto& o : outputs) {
    if (o.target.empty()) continue;
    o.make()->write({run, reader}, o.target);  // runtime_error names the target
    std::cerr << "ddpscope: wrote " << o.target << "\n";
  }
  return 0;
}

}  // namespace

Run add_report(CLI::App& app) {
  auto a = std::make_shared<ReportArgs>();
  auto* sub = app.add_subcommand("report", "analyze a recorded run and write reports");
  sub->add_option("run", a->path, "run.db (or a single rank-<R>.db)")->required();
  sub->add_option("--html", a->html, "write a self-contained HTML report");
  sub->add_option("--csv", a->csv, "write one CSV file per table into this directory");
  sub->add_option("--json", a->json, "write the analysis as JSON (docs/analysis.md)");
  sub->add_option("--trace", a->trace, "write a Chrome trace-event file for ui.perfetto.dev");
  sub->add_flag("-q,--quiet", a->quiet, "no terminal summary");
  return [a] { return run_report(*a); };
}

}  // namespace ddpscope::cli
