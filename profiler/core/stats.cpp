#include "profiler/core/stats.h"

#include <cmath>

namespace ddpscope::stats {

RankPosition rank_position(size_t n, double q) {
  if (n < 2 || !(q > 0)) return {};  // !(q > 0) also catches NaN
  if (q >= 1) return {n - 1, 0};
  double h = q * double(n - 1);
  double lower = std::floor(h);
  return {size_t(lower), h - lower};
}

double quantile_sorted(std::span<const double> sorted, double q) {
  if (sorted.empty()) return 0;
  RankPosition at = rank_position(sorted.size(), q);
  if (at.fraction == 0) return sorted[at.lower];
  return between(sorted[at.lower], sorted[at.lower + 1], at.fraction);
}

}  // namespace ddpscope::stats
