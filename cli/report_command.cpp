// `ddpscope report RUN.db`: the run at a glance and the per-op table.
#include <iostream>

#include "cli/commands.h"
#include "profiler/analysis/analyze.h"
#include "profiler/store/reader.h"
#include "reports/text_analysis.h"
#include "reports/text_summary.h"

namespace ddpscope::cli {

Run add_report(CLI::App& app) {
  auto path = std::make_shared<std::string>();
  auto* sub = app.add_subcommand("report", "summarize a recorded run");
  sub->add_option("run", *path, "run.db (or a single rank-<R>.db)")->required();
  return [path] {
    store::RunReader reader(*path);
    reports::RunOverview run;
    run.path = *path;
    auto meta = reader.meta();
    run.command = meta["command_line"];
    run.processes = reader.processes();
    run.collectives = reader.count("collectives");
    auto analysis = analysis::analyze_run(reader);
    reports::print_overview(run, std::cout);
    reports::print_op_table(analysis.ops, std::cout);
    std::cout << "\n";
    reports::print_analysis(analysis, std::cout);
    return 0;
  };
}

}  // namespace ddpscope::cli
