#include "profiler/analysis/iterations.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "profiler/analysis/op_summary.h"
#include "profiler/core/stats.h"

namespace ddpscope::analysis {

Call call_of(const CollectiveRecord& c) {
  Call x;
  x.id = c.id;
  x.host_start = c.host_start_ns;
  x.start = execution_start(c);
  x.end = execution_end(c);
  x.bytes = c.bytes;
  x.seq = c.seq;
  x.comm_id = c.comm_id;
  x.rank = c.rank;
  x.nranks = c.nranks;
  x.op = c.op;
  return x;
}

uint64_t busiest_comm(const std::map<uint64_t, uint64_t>& allreduce_bytes_by_comm) {
  uint64_t best = 0, most = 0;
  for (const auto& [id, b] : allreduce_bytes_by_comm)
    if (b > most) most = b, best = id;
  return best;
}
namespace {

constexpr size_t kMaxPeriod = 512;  // buckets per iteration we can recognise

double match_fraction(const std::vector<uint64_t>& s, size_t p) {
  size_t n = s.size(), same = 0;
  for (size_t i = 0; i + p < n; ++i) same += s[i] == s[i + p];
  return double(same) / double(n - p);
}

// Gap before call i: from the previous call's end to this call's start.
int64_t gap_before(const std::vector<Call>& c, size_t i) {
  return i == 0 ? 0 : std::max<int64_t>(0, c[i].host_start - c[i - 1].end);
}

// The phase whose preceding gaps are longest: where iterations begin.
size_t boundary_phase(const std::vector<Call>& c, size_t p) {
  size_t best = 0;
  double best_gap = -1;
  for (size_t k = 0; k < p; ++k) {
    std::vector<int64_t> gaps;
    for (size_t i = k == 0 ? p : k; i < c.size(); i += p) gaps.push_back(gap_before(c, i));
    double g = stats::median(gaps);
    if (g > best_gap) best_gap = g, best = k;
  }
  return best;
}

bool window_is(const std::vector<Call>& c, size_t at, const std::vector<uint64_t>& pattern) {
  if (at + pattern.size() > c.size()) return false;
  for (size_t j = 0; j < pattern.size(); ++j)
    if (c[at + j].bytes != pattern[j]) return false;
  return true;
}

// The most common window of length p starting at the boundary phase.
std::vector<uint64_t> modal_pattern(const std::vector<Call>& c, size_t p, size_t phase) {
  std::map<std::vector<uint64_t>, int> seen;
  for (size_t at = phase; at + p <= c.size(); at += p) {
    std::vector<uint64_t> w;
    for (size_t j = 0; j < p; ++j) w.push_back(c[at + j].bytes);
    ++seen[w];
  }
  std::vector<uint64_t> best;
  int count = 0;
  for (auto& [w, n] : seen)
    if (n > count) count = n, best = w;
  return best;
}

// Equal-size buckets defeat the size period: fall back to the gaps alone,
// splitting where a gap is far longer than the typical one.
size_t period_from_gaps(const std::vector<Call>& c) {
  std::vector<int64_t> gaps;
  for (size_t i = 1; i < c.size(); ++i) gaps.push_back(gap_before(c, i));
  if (gaps.empty()) return 0;
  double typical = stats::median(gaps);
  double threshold = std::max(typical * 4, double(*std::max_element(gaps.begin(), gaps.end())) / 3);
  std::vector<size_t> starts{0};
  for (size_t i = 1; i < c.size(); ++i)
    if (gap_before(c, i) > threshold) starts.push_back(i);
  if (starts.size() < 3) return 0;
  std::vector<int64_t> lengths;
  for (size_t k = 1; k < starts.size(); ++k) lengths.push_back(int64_t(starts[k] - starts[k - 1]));
  return size_t(std::lround(stats::median(lengths)));  // a period is whole: halves up
}

}  // namespace

size_t find_period(const std::vector<uint64_t>& all) {
  // A prefix of 8 maximal periods shows any period we can recognise; scanning
  // a million calls at every shift would cost O(n * kMaxPeriod).
  std::vector<uint64_t> s(all.begin(), all.begin() + std::min(all.size(), 8 * kMaxPeriod));
  size_t limit = std::min(kMaxPeriod, s.size() / 2);
  double best = 0;
  std::vector<double> f(limit + 1, 0);
  for (size_t p = 1; p <= limit; ++p) {
    f[p] = match_fraction(s, p);
    // The answer is the first p within 95 % of the best shift, and no shift
    // matches more than all: a p at 0.95 or above that leads every shorter
    // one by more than that margin is the answer whatever comes after. A
    // job's period is found after p shifts, not kMaxPeriod (at 1,024 ranks
    // the scan was a tenth of the live view's look).
    if (f[p] >= 0.95 && best < 0.95 * f[p]) return p;
    best = std::max(best, f[p]);
  }
  if (best < 0.5) return 0;
  for (size_t p = 1; p <= limit; ++p)
    if (f[p] >= 0.95 * best) return p;
  return 0;
}

IterationSplit split_iterations(const std::vector<Call>& c) {
  IterationSplit out;
  std::vector<uint64_t> sizes;
  for (const auto& x : c) sizes.push_back(x.bytes);
  size_t p = find_period(sizes);
  bool all_equal =
      std::all_of(sizes.begin(), sizes.end(), [&](uint64_t b) { return b == sizes[0]; });
  if (p == 1 && all_equal && c.size() > 2) p = std::max<size_t>(1, period_from_gaps(c));
  if (p == 0) return out;
  size_t phase = boundary_phase(c, p);
  out.pattern = modal_pattern(c, p, phase);
  size_t first = phase;
  while (first < c.size() && !window_is(c, first, out.pattern)) first += p;
  if (first > 0 && first < c.size()) out.iterations.push_back({0, first, true});
  for (size_t at = first; window_is(c, at, out.pattern); at += p)
    out.iterations.push_back({at, p, false});
  return out;
}

IterationSplit split_by_ranges(const std::vector<Call>& c, const std::vector<Interval>& steps) {
  IterationSplit out;
  size_t i = 0;
  for (const auto& step : steps) {
    while (i < c.size() && c[i].host_start < step.start) ++i;
    size_t first = i;
    while (i < c.size() && c[i].host_start < step.end) ++i;
    if (i > first) out.iterations.push_back({first, i - first, false});
  }
  if (out.iterations.empty()) return out;
  const auto& last = out.iterations.back();
  for (size_t j = 0; j < last.count; ++j) out.pattern.push_back(c[last.first + j].bytes);
  auto& head = out.iterations.front();
  head.warmup = out.iterations.size() > 1 && head.count != out.pattern.size();
  return out;
}

}  // namespace ddpscope::analysis
