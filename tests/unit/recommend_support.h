// What the recommend() tests share: the advice on one setting.
#pragma once

#include <string>
#include <vector>

#include "profiler/analysis/recommend.h"

namespace ddpscope::testing {

inline std::vector<analysis::Recommendation> with_setting(const analysis::RunAnalysis& run,
                                                          const std::string& setting) {
  std::vector<analysis::Recommendation> out;
  for (auto& r : analysis::recommend(run))
    if (r.setting == setting) out.push_back(r);
  return out;
}

}  // namespace ddpscope::testing
