// Interval arithmetic for overlap: unions (not sums) of busy intervals, and
// how much of an interval a union covers. Half-open [start, end) in ns.
#pragma once

#include <cstdint>
#include <vector>

namespace ddpscope::analysis {

struct Interval {
  int64_t start = 0, end = 0;
  int64_t length() const { return end > start ? end - start : 0; }
  bool operator==(const Interval&) const = default;
};

// Sorted, disjoint, non-adjacent intervals covering the same points as the input.
std::vector<Interval> union_of(std::vector<Interval> intervals);

// Total length of a union (as returned by union_of).
int64_t total_length(const std::vector<Interval>& unioned);

// How much of `x` the union covers (binary search: O(log n + k)).
int64_t covered(const std::vector<Interval>& unioned, Interval x);

// Length of union(xs) minus what `cover` (a union) covers of it.
int64_t uncovered_length(const std::vector<Interval>& xs, const std::vector<Interval>& cover);

// The union clipped to [lo, hi).
std::vector<Interval> clip(const std::vector<Interval>& unioned, int64_t lo, int64_t hi);

}  // namespace ddpscope::analysis
