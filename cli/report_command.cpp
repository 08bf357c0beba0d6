// `ddpscope report RUN.db [--html F] [--csv DIR] [--json F] [--trace F]
//  [--kineto DIR] [--ranks LIST] [--since S] [--until S] [--iterations A-B]`:
// the run (or a part of it) at a glance on the terminal, and any of the file
// formats.
#include <iostream>
#include <optional>
#include <stdexcept>

#include "cli/commands.h"
#include "profiler/analysis/analyze.h"
#include "profiler/analysis/iteration_window.h"
#include "profiler/store/reader.h"
#include "profiler/store/run_filter.h"
#include "reports/formats.h"
#include "reports/text_analysis.h"
#include "reports/text_summary.h"

namespace ddpscope::cli {
namespace {

struct ReportArgs {
  std::string path, ranks, iterations;
  // One target per report format (reports/formats.h), "" where not asked for.
  std::vector<std::string> outputs = std::vector<std::string>(reports::report_formats().size());
  std::optional<double> since, until;
  bool quiet = false;
};

int run_report(const ReportArgs& a) {
  // Outputs first: a typo in one should not cost a long analysis.
  const auto& formats = reports::report_formats();
  for (size_t i = 0; i < formats.size(); ++i)
    if (!a.outputs[i].empty()) formats[i].check(a.outputs[i]);
  auto opened = store::open_run(a.path);
  store::RunReader& reader = *opened;
  const int64_t start = store::run_start_ns(reader);
  auto filter = store::parse_run_filter(a.ranks, a.since, a.until, start);
  std::vector<int> recorded;
  for (const auto& p : reader.processes()) recorded.push_back(p.rank);
  store::check_ranks_exist(filter, recorded);
  std::string part;
  if (!a.iterations.empty()) {
    auto w = analysis::iteration_window(reader, a.iterations, filter.ranks);
    filter.since_ns = w.since_ns;
    filter.until_ns = w.until_ns;
    part = "iterations " + a.iterations + " of rank " + std::to_string(w.rank) + ": ";
  }
  part += store::describe(filter, start);
  if (part.empty() && !filter.all()) part = "(filtered)";
  reader.set_filter(filter);

  analysis::AnalysisOptions options;
  CollectiveRuns collectives;
  analysis::CollectiveLabels labels;
  if (reports::walks_collectives(a.outputs)) {
    options.keep_collectives = &collectives;
    options.keep_labels = &labels;
  }
  auto run = analysis::analyze_run(reader, options);
  if (!a.quiet) {
    reports::RunOverview overview;
    overview.path = a.path;
    overview.command = run.command;
    overview.processes = reader.processes();
    overview.collectives = reader.count("collectives");
    overview.part = part;
    reports::print_overview(overview, std::cout);
    reports::print_op_table(run.ops, std::cout);
    std::cout << "\n";
    reports::print_analysis(run, std::cout);
  }
  for (const std::string& written : reports::write_reports(
           {run, reader, options.keep_collectives, options.keep_labels}, a.outputs))
    std::cerr << "ddpscope: wrote " << written << "\n";
  return 0;
}

}  // namespace

Run add_report(CLI::App& app) {
  auto a = std::make_shared<ReportArgs>();
  auto* sub = app.add_subcommand("report", "analyze a recorded run and write reports");
  sub->add_option(
         "run", a->path,
         "run.db, a single rank-<R>.db, or a directory of rank files, read together as their "
         "merge would be without writing it")
      ->required();
  const auto& formats = reports::report_formats();
  for (size_t i = 0; i < formats.size(); ++i)
    sub->add_option(formats[i].flag, a->outputs[i], formats[i].help);
  sub->add_option("--ranks", a->ranks, "only these ranks: numbers and ranges, e.g. 0,3,8-15");
  auto* since =
      sub->add_option("--since", a->since, "only events from S seconds after the run's start");
  auto* until =
      sub->add_option("--until", a->until, "only events before S seconds after the run's start");
  sub->add_option("--iterations", a->iterations,
                  "only iterations A to B (\"A-B\" or \"A\", 0-based as the report numbers "
                  "them) of the lowest rank reported: the time from the end of iteration A-1's "
                  "last DDP all-reduce (the run's start for A=0) to the end of B's")
      ->excludes(since)
      ->excludes(until);
  sub->add_flag("-q,--quiet", a->quiet, "no terminal summary");
  return [a] { return run_report(*a); };
}

}  // namespace ddpscope::cli
