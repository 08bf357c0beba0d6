// `ddpscope check --baseline A.db --candidate B.db [--tolerance PCT] [--metric
// LIST] [--junit F] [--markdown F]`: the CI regression gate. Exit 0 when no
// metric got worse beyond the tolerance with confidence, 1 when one did (each
// named), 2 for bad input (mismatched, corrupt or unusable databases, flags).
// The method is in docs/ci.md.
#include <algorithm>
#include <iostream>

#include "cli/commands.h"
#include "profiler/core/atomic_file.h"
#include "profiler/regression/decision.h"
#include "profiler/regression/metrics.h"
#include "reports/regression/renderers.h"

namespace ddpscope::cli {
namespace {

// "comm, exposed, ...": the --metric names, as regression/ declares them.
std::string metric_list() {
  std::string out;
  for (const auto& m : regression::metric_families()) out += (out.empty() ? "" : ", ") + m;
  return out;
}

struct CheckArgs {
  std::vector<std::string> baseline, candidate, metrics;
  double tolerance_pct = 5;
  double confidence_pct = 95;
  long long min_samples = 5;  // signed: "-1" is refused, not read as 2^64 - 1
  std::string junit, markdown;
};

regression::CheckOptions options_of(const CheckArgs& a) {
  regression::CheckOptions o;
  if (!(a.tolerance_pct >= 0 && a.tolerance_pct < 1000))
    throw InputError("--tolerance must be a percentage from 0 to 1000");
  if (!(a.confidence_pct >= 50 && a.confidence_pct < 100))
    throw InputError("--confidence must be a percentage from 50 to below 100");
  if (a.min_samples < 2 || a.min_samples > 1'000'000)
    throw InputError("--min-samples must be from 2 to 1000000");
  const auto& known = regression::metric_families();
  for (const auto& m : a.metrics)
    if (std::find(known.begin(), known.end(), m) == known.end())
      throw InputError("--metric: unknown metric '" + m + "' (metrics: " + metric_list() + ")");
  o.tolerance = a.tolerance_pct / 100;
  o.confidence = a.confidence_pct / 100;
  o.min_samples = size_t(a.min_samples);
  o.families = a.metrics;
  return o;
}

std::vector<regression::RunMetrics> load_side(const std::vector<std::string>& paths) {
  std::vector<regression::RunMetrics> out;
  for (size_t i = 0; i < paths.size(); ++i) {
    // The same run twice would pass for two runs that agree: less noise than there is.
    if (std::find(paths.begin(), paths.begin() + long(i), paths[i]) != paths.begin() + long(i))
      throw InputError(paths[i] +
                       ": given twice on one side (repeated runs must be different runs)");
    for (auto& run : regression::load_run_metrics(paths[i])) out.push_back(std::move(run));
  }
  return out;
}

int run_check(const CheckArgs& a) {
  auto options = options_of(a);
  for (const auto* target : {&a.junit, &a.markdown})
    if (!target->empty()) core::check_output_path(*target);
  auto result = regression::check(load_side(a.baseline), load_side(a.candidate), options);
  regression::print_check(result, std::cout);
  // A report path that cannot be written is an InputError (core/atomic_file.h),
  // not a regression (exit 1).
  auto write = [](auto writer, const regression::CheckResult& r, const std::string& path) {
    if (path.empty()) return;
    writer(r, path);
    std::cerr << "ddpscope: wrote " << path << "\n";
  };
  write(regression::write_junit, result, a.junit);
  write(regression::write_markdown, result, a.markdown);
  return result.regressed() ? 1 : 0;
}

}  // namespace

Run add_check(CLI::App& app) {
  auto a = std::make_shared<CheckArgs>();
  auto* sub = app.add_subcommand(
      "check", "compare a candidate run with a baseline; exit 1 on a communication regression");
  sub->add_option("--baseline", a->baseline,
                  "baseline run.db, recording directory (its rank files) or tuner DB (repeat, "
                  "or comma-separate, for repeated runs)")
      ->required()
      ->delimiter(',');
  sub->add_option("--candidate", a->candidate,
                  "candidate run.db, recording directory or tuner DB (may repeat)")
      ->required()
      ->delimiter(',');
  sub->add_option("--tolerance", a->tolerance_pct,
                  "smallest slowdown that counts, in percent (cover your runner's run-to-run "
                  "noise unless runs are repeated)")
      ->capture_default_str();
  sub->add_option("--metric", a->metrics, "comma-separated: " + metric_list())->delimiter(',');
  sub->add_option("--confidence", a->confidence_pct,
                  "confidence for the whole check, in percent (shared out over the metrics)")
      ->capture_default_str();
  sub->add_option("--min-samples", a->min_samples, "samples a run needs for a metric to count")
      ->capture_default_str();
  sub->add_option("--junit", a->junit, "write JUnit XML (one test case per metric)");
  sub->add_option("--markdown", a->markdown, "write a Markdown summary (CI job summary)");
  sub->footer(
      "\nExit status: 0 no regression, 1 a regression (each named with its figures), 2 bad input\n"
      "(mismatched, corrupt or unusable databases, bad flags). Give each side several runs\n"
      "(e.g. --baseline r1.db,r2.db,r3.db) so that the run-to-run noise is measured; docs/ci.md.");
  return [a] { return run_check(*a); };
}

}  // namespace ddpscope::cli
