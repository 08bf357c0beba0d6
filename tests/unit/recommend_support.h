// What the recommend() tests share: a run to fill in, the advice on one
// setting.
#pragma once

#include <string>
#include <vector>

#include "profiler/analysis/recommend.h"

namespace ddpscope::testing {

// A Gloo run of `world` ranks, 10 steady steps (plus a warm-up) of `step_ms`.
inline analysis::RunAnalysis steady_run(int world, double step_ms) {
  analysis::RunAnalysis run;
  run.world_size = run.ranks_recorded = world;
  run.backend = "gloo";
  run.iterations.count = 11;
  run.iterations.warmup = 1;
  run.iterations.median_ms = step_ms;
  return run;
}

inline std::vector<analysis::Recommendation> with_setting(const analysis::RunAnalysis& run,
                                                          const std::string& setting) {
  std::vector<analysis::Recommendation> out;
  for (auto& r : analysis::recommend(run))
    if (r.setting == setting) out.push_back(r);
  return out;
}

}  // namespace ddpscope::testing
