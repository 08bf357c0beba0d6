// Order statistics the analysis uses everywhere: the q-quantile of a sample by
// nearest rank (no interpolation: a reported median is a measured value).
#pragma once

#include <algorithm>
#include <vector>

namespace ddpscope::analysis {

inline double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  size_t k = size_t(q * double(v.size() - 1) + 0.5);
  std::nth_element(v.begin(), v.begin() + long(k), v.end());
  return v[k];
}

}  // namespace ddpscope::analysis
