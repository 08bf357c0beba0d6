// A bucket plan as its buckets' parameter indices, for comparing plans in tests.
#pragma once

#include <vector>

#include "tuner/bucket_plan.h"

namespace ddpscope::testing {

using Plan = std::vector<std::vector<size_t>>;
constexpr double kMiB = 1024 * 1024;

inline Plan indices(const tuner::BucketPlan& plan) {
  Plan out;
  for (const auto& b : plan.buckets) out.push_back(b.params);
  return out;
}

}  // namespace ddpscope::testing
