#include "profiler/analysis/intervals.h"

#include <algorithm>

namespace ddpscope::analysis {

std::vector<Interval> union_of(std::vector<Interval> v) {
  v.erase(std::remove_if(v.begin(), v.end(), [](const Interval& i) { return i.end <= i.start; }),
          v.end());
  auto by_start = [](const Interval& a, const Interval& b) { return a.start < b.start; };
  // Kernels come from the store in time order: a check, most often, not a sort.
  if (!std::is_sorted(v.begin(), v.end(), by_start)) std::sort(v.begin(), v.end(), by_start);
  // Merged in place, and sized to fit: a rank's compute kernels are
  // millions, and the analysis keeps every rank's union.
  size_t n = 0;
  for (const auto& i : v) {
    if (n && i.start <= v[n - 1].end)
      v[n - 1].end = std::max(v[n - 1].end, i.end);
    else
      v[n++] = i;
  }
  v.resize(n);
  v.shrink_to_fit();
  return v;
}

int64_t total_length(const std::vector<Interval>& u) {
  int64_t t = 0;
  for (const auto& i : u) t += i.length();
  return t;
}

int64_t covered(const std::vector<Interval>& u, Interval x) {
  if (x.length() == 0 || u.empty()) return 0;
  // First interval that ends after x starts.
  auto it = std::upper_bound(u.begin(), u.end(), x.start,
                             [](int64_t s, const Interval& i) { return s < i.end; });
  int64_t c = 0;
  for (; it != u.end() && it->start < x.end; ++it)
    c += std::min(it->end, x.end) - std::max(it->start, x.start);
  return c;
}

int64_t uncovered_length(const std::vector<Interval>& xs, const std::vector<Interval>& cover) {
  int64_t t = 0;
  for (const auto& i : union_of(xs)) t += i.length() - covered(cover, i);
  return t;
}

std::vector<Interval> clip(const std::vector<Interval>& u, int64_t lo, int64_t hi) {
  std::vector<Interval> out;
  for (const auto& i : u) {
    Interval c{std::max(i.start, lo), std::min(i.end, hi)};
    if (c.length() > 0) out.push_back(c);
  }
  return out;
}

}  // namespace ddpscope::analysis
