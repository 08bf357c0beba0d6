#include "tuner/model/size_correction.h"

#include <algorithm>
#include <cmath>

namespace ddpscope::tuner::model {

SizeCorrection::SizeCorrection(std::vector<SizePoint> points) : points_(std::move(points)) {
  std::sort(points_.begin(), points_.end(), [](const SizePoint& a, const SizePoint& b) {
    return a.bytes_per_step < b.bytes_per_step;
  });
}

double SizeCorrection::at(double bytes_per_step) const {
  if (points_.empty()) return 1;
  if (!(bytes_per_step > points_.front().bytes_per_step)) return points_.front().ratio;
  if (bytes_per_step >= points_.back().bytes_per_step) return points_.back().ratio;
  auto hi = std::upper_bound(points_.begin(), points_.end(), bytes_per_step,
                             [](double x, const SizePoint& p) { return x < p.bytes_per_step; });
  auto lo = hi - 1;
  const double f = std::log(bytes_per_step / lo->bytes_per_step) /
                   std::log(hi->bytes_per_step / lo->bytes_per_step);
  return lo->ratio + f * (hi->ratio - lo->ratio);
}

}  // namespace ddpscope::tuner::model
