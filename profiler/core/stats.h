// Order statistics: the one quantile convention behind every figure that
// `report`, `tune` and `check` print (docs/figures.md, "Medians and
// percentiles"), so the three commands give the same median of the same data.
//
// The convention: linear interpolation between the two closest ranks
// (Hyndman & Fan type 7, the default of numpy.quantile, R's quantile() and
// pandas). Sorted x[0..n-1], h = q·(n−1):
//     Q(q) = x[⌊h⌋] + (h − ⌊h⌋)·(x[⌊h⌋+1] − x[⌊h⌋])
// so the median of an even count is the mean of the two middle values.
//
// Why this one and not nearest rank (the report's old rule, "a reported
// median is a measured value"):
// - A user who checks a figure with numpy or pandas gets the same number.
// - It is unbiased between the two middle values: nearest rank took the upper
//   one, so with two ranks every "median over ranks" was the slower rank's.
// - It is continuous in the data and in q: `check` bootstraps medians and
//   reads percentiles of 10,000 ratios, where jumps between ranks would show.
// - `tune`, the calibration and `check` already used it; only the report did not.
// Where a caller needs a member of the sample (a period length, a count of
// iterations) it rounds the quantile itself and says so.
//
// An empty sample has no quantile; these functions return 0 for it, the value
// every figure of ddpscope's outputs takes when there is nothing to measure.
#pragma once

#include <algorithm>
#include <cstddef>
#include <span>
#include <type_traits>
#include <vector>

namespace ddpscope::stats {

template <class T>
concept Sample = std::is_arithmetic_v<T>;

// Where the q-quantile falls between ranks of n sorted values: the lower rank
// and how far towards the next one (0 ≤ fraction < 1). q is clamped to [0, 1].
struct RankPosition {
  size_t lower = 0;
  double fraction = 0;
};
RankPosition rank_position(size_t n, double q);

// Between the values at ranks lower and lower + 1. Exact at both ends and
// when the two values are equal (a constant sample's quantile is the constant).
inline double between(double lower, double upper, double fraction) {
  return fraction == 0 ? lower : lower + fraction * (upper - lower);
}

// The q-quantile of values already sorted ascending.
double quantile_sorted(std::span<const double> sorted, double q);

// The q-quantile, reordering `v` in place (no copy: for large samples, such as
// a million collective durations). O(n).
template <Sample T>
double quantile_in_place(std::span<T> v, double q) {
  if (v.empty()) return 0;
  RankPosition at = rank_position(v.size(), q);
  auto lower = v.begin() + std::ptrdiff_t(at.lower);
  std::nth_element(v.begin(), lower, v.end());
  if (at.fraction == 0) return double(*lower);
  // After nth_element everything past `lower` is ≥ it: the next rank is their minimum.
  return between(double(*lower), double(*std::min_element(lower + 1, v.end())), at.fraction);
}

template <Sample T>
double quantile(std::vector<T> v, double q) {
  return quantile_in_place(std::span<T>(v), q);
}

template <Sample T>
double median(std::vector<T> v) {
  return quantile_in_place(std::span<T>(v), 0.5);
}

}  // namespace ddpscope::stats
