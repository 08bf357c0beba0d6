// What a link's α-β fit misses, size by size. Measured all-reduce times do
// not lie on one line (or one maximum) at every size: where the message
// steps and the bytes take about as long, an all-reduce costs more than
// the larger and less than the sum; a shaped link's token bucket sends a
// step that fits its burst at full speed; buffers fall out of cache. The
// calibration keeps, for each size it measured, the ratio of the measured
// time to the fit's, and a prediction multiplies the fit by the ratio
// interpolated at its size: the fit carries the physics (how time scales
// with ranks and bytes), the ratio the machine's residual shape.
#pragma once

#include <vector>

namespace ddpscope::tuner::model {

struct SizePoint {
  double bytes_per_step = 0;  // what one message step of the all-reduce moves
  double ratio = 1;           // measured / fitted
};

class SizeCorrection {
 public:
  SizeCorrection() = default;
  explicit SizeCorrection(std::vector<SizePoint> points);  // any order
  // 1 without points; between two, linear in log(bytes per step) (sizes are
  // measured in doublings); beyond the measured range, the nearest end's.
  double at(double bytes_per_step) const;
  const std::vector<SizePoint>& points() const { return points_; }
  bool empty() const { return points_.empty(); }

 private:
  std::vector<SizePoint> points_;  // by bytes per step, each size once
};

}  // namespace ddpscope::tuner::model
