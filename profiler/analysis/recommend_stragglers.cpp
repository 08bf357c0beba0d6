// A straggling rank: one the others wait for a material share of every step.
//
// Every synchronising collective completes only once its last rank has
// entered, so each millisecond a rank enters an iteration after the typical
// rank is, to first order, a millisecond every other rank waits: its excess
// lateness divided by the step is the share of the step the job loses to it.
// A rank is flagged when that excess is at least
//   - kMaterialShare (5 %) of the median iteration: the smallest slowdown
//     `check` counts by default (docs/ci.md), so a rank flagged here costs
//     the job a regression-sized share of every step; a share rather than a
//     time keeps it meaningful from 10 ms GPU steps to 1 s CPU steps, and
//   - kNoiseFloorMs (1 ms): ranks on one host share a clock, and ranks on
//     other hosts are corrected from collective completions to within one
//     all-reduce's completion spread (tens to hundreds of µs), so 1 ms is well
//     above clock error; scheduler jitter is absorbed by taking medians over
//     iterations. On steps under 20 ms the floor, not the share, decides.
// A run with no iterations (no DDP buckets found) has no step to compare
// with: there a rank needs the floor and 3x the typical rank's lateness.
//
// The typical rank is the lower middle one, not the median
// (profiler/core/stats.h): with two ranks the median would sit halfway to the
// straggler itself and hide half its lateness.
#include <algorithm>
#include <string>

#include "profiler/analysis/recommend_rules.h"

namespace ddpscope::analysis::rules {
namespace {

constexpr double kMaterialShare = 0.05;
constexpr double kNoiseFloorMs = 1.0;

double typical_lateness(const std::vector<RankStats>& ranks) {
  std::vector<double> lates;
  for (const auto& r : ranks) lates.push_back(straggle_ms(r));
  std::sort(lates.begin(), lates.end());
  return lates[(lates.size() - 1) / 2];
}

bool material(double excess_ms, double late_ms, double typical_ms, double step_ms) {
  if (excess_ms < kNoiseFloorMs) return false;
  if (step_ms > 0) return excess_ms >= kMaterialShare * step_ms;
  return late_ms > 3 * typical_ms;
}

std::string reason(const RankStats& r, double typical, double step_ms) {
  double excess = straggle_ms(r) - typical;
  std::string why =
      fmt("runs %.2f ms behind the typical rank (its median lateness entering "
          "iterations or collectives, %.2f ms, against %.2f ms)",
          excess, straggle_ms(r), typical);
  if (step_ms > 0)
    why += fmt(", %.1f%% of the %.1f ms step that the other ranks wait for it",
               100 * excess / step_ms, step_ms);
  why +=
      fmt(", and is last into %.0f%% of collectives: look at its input pipeline, host load or "
          "GPU",
          r.last_share_pct);
  return why + (r.host.empty() ? "" : " (host " + r.host + ")");
}

}  // namespace

void straggler_rules(const RunAnalysis& run, std::vector<Recommendation>& out) {
  if (run.ranks.size() < 2) return;
  double typical = typical_lateness(run.ranks);
  double step_ms = run.iterations.median_ms;
  for (const auto& r : run.ranks) {
    double late = straggle_ms(r);
    if (material(late - typical, late, typical, step_ms))
      out.push_back({"rank " + std::to_string(r.rank), "straggler", reason(r, typical, step_ms)});
  }
}

}  // namespace ddpscope::analysis::rules
