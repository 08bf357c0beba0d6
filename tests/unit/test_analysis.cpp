// Analysis on constructed event sets: interval arithmetic, iteration
// detection (warm-up, out-of-order Gloo execution, extra user collectives,
// equal-size buckets), clock skew, and a planted straggler.
#include <algorithm>
#include <catch2/catch.hpp>
#include <random>

#include "profiler/analysis/intervals.h"
#include "profiler/analysis/iterations.h"
#include "profiler/analysis/stragglers.h"

using namespace ddpscope;
using namespace ddpscope::analysis;

TEST_CASE("unions merge nested, adjacent and overlapping intervals, not sum them") {
  auto u = union_of({{10, 20}, {12, 15}, {20, 25}, {30, 40}, {35, 50}, {60, 60}});
  REQUIRE(u.size() == 2);
  CHECK(u[0].start == 10);
  CHECK(u[0].end == 25);
  CHECK(u[1].start == 30);
  CHECK(u[1].end == 50);
  CHECK(total_length(u) == 35);
  CHECK(covered(u, {0, 100}) == 35);
  CHECK(covered(u, {22, 32}) == 5);
  CHECK(covered(u, {26, 29}) == 0);
  CHECK(uncovered_length({{0, 12}, {5, 35}}, u) == 35 - 20);
  auto c = clip(u, 15, 45);
  REQUIRE(c.size() == 2);
  CHECK(c[0].start == 15);
  CHECK(c[1].end == 45);
}

TEST_CASE("overlap on several streams counts the union once") {
  // Two compute streams overlapping each other, one communication interval.
  auto compute = union_of({{0, 60}, {40, 100}, {150, 200}});
  CHECK(covered(compute, {50, 170}) == (100 - 50) + (170 - 150));
}

namespace {

// A DDP-like stream: one warm-up bucket, then `iters` iterations of
// `pattern`, with a long gap (forward + optimizer) before each iteration.
std::vector<Call> ddp_stream(const std::vector<uint64_t>& pattern, int iters, uint64_t warmup,
                             int64_t bucket_ns = 1000, int64_t gap_ns = 50000) {
  std::vector<Call> calls;
  int64_t t = 0;
  uint64_t seq = 0;
  auto add = [&](uint64_t bytes) {
    Call c;
    c.host_start = c.start = t;
    c.end = t + bucket_ns;
    c.bytes = bytes;
    c.seq = seq++;
    c.nranks = 2;
    calls.push_back(c);
    t += bucket_ns + 200;
  };
  t += gap_ns;
  add(warmup);
  for (int i = 0; i < iters; ++i) {
    t += gap_ns;
    for (auto b : pattern) add(b);
  }
  return calls;
}

}  // namespace

TEST_CASE("iterations: warm-up bucket, then the rebuilt pattern") {
  std::vector<uint64_t> pattern{1062952, 263168, 263168, 263168, 263168};
  auto calls = ddp_stream(pattern, 9, 2115624);
  auto split = split_iterations(calls);
  CHECK(split.pattern == pattern);
  REQUIRE(split.iterations.size() == 10);
  CHECK(split.iterations[0].warmup);
  CHECK(split.iterations[0].count == 1);
  CHECK(split.iterations[1].first == 1);
  CHECK_FALSE(split.iterations[9].warmup);
}

TEST_CASE("iterations: an extra user all-reduce at the end belongs to no iteration") {
  auto calls = ddp_stream({4000, 3000, 2000}, 6, 9000);
  Call loss = calls.back();
  loss.seq++;
  loss.bytes = 4;
  loss.host_start = loss.start = loss.end + 100000;
  loss.end = loss.start + 10;
  calls.push_back(loss);
  auto split = split_iterations(calls);
  REQUIRE(split.iterations.size() == 7);
  CHECK(split.pattern == std::vector<uint64_t>{4000, 3000, 2000});
}

TEST_CASE("iterations: Gloo executing out of issue order does not matter (seq order)") {
  auto calls = ddp_stream({5000, 4000, 3000, 2000}, 5, 14000);
  // Swap execution times of two buckets in each iteration; seq stays issue order.
  for (size_t i = 1; i + 3 < calls.size(); i += 4)
    std::swap(calls[i + 1].start, calls[i + 2].start);
  auto split = split_iterations(calls);
  CHECK(split.iterations.size() == 6);
  CHECK(split.pattern == std::vector<uint64_t>{5000, 4000, 3000, 2000});
}

TEST_CASE("iterations: equal-size buckets are split by the gaps") {
  auto calls = ddp_stream({25 << 20, 25 << 20, 25 << 20}, 5, 25 << 20);
  auto split = split_iterations(calls);
  // The warm-up bucket has the same size: it is one more iteration of one bucket.
  REQUIRE(split.pattern.size() == 3);
  CHECK(split.iterations.size() >= 5);
}

TEST_CASE("find_period picks the fundamental period") {
  std::vector<uint64_t> s;
  for (int i = 0; i < 10; ++i)
    for (uint64_t b : {7, 5, 5, 3}) s.push_back(b);
  CHECK(find_period(s) == 4);
  CHECK(find_period({1, 2, 3, 4, 5, 6, 7, 8}) == 0);
}

namespace {

// find_period's definition, every shift scanned: the first shift within
// 95 % of the best, none below 0.5.
size_t period_by_full_scan(const std::vector<uint64_t>& all) {
  std::vector<uint64_t> s(all.begin(), all.begin() + std::min<size_t>(all.size(), 8 * 512));
  size_t limit = std::min<size_t>(512, s.size() / 2);
  std::vector<double> f(limit + 1, 0);
  double best = 0;
  for (size_t p = 1; p <= limit; ++p) {
    size_t same = 0;
    for (size_t i = 0; i + p < s.size(); ++i) same += s[i] == s[i + p];
    best = std::max(best, f[p] = double(same) / double(s.size() - p));
  }
  if (best < 0.5) return 0;
  for (size_t p = 1; p <= limit; ++p)
    if (f[p] >= 0.95 * best) return p;
  return 0;
}

}  // namespace

TEST_CASE("find_period stops early only where the full scan agrees") {
  // Periodic sizes with a share of them changed at random: from clean
  // patterns (found after p shifts) to noisy ones near the 95 % margin,
  // where only the full scan can tell.
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 400; ++trial) {
    size_t period = 1 + rng() % 40, n = period * (2 + rng() % 30);
    std::vector<uint64_t> pattern(period), s;
    for (auto& b : pattern) b = rng() % 4;  // few sizes: shorter shifts match too
    if (trial % 2) {  // nearly a repeat of a short part: that shift matches 88-97 %
      size_t part = 1 + rng() % 3, repeats = 16 + rng() % 50;
      period = part * repeats, n = period * (2 + rng() % 4);
      pattern.assign(period, 0);
      for (size_t i = 0; i < period; ++i) pattern[i] = 1 + i % part;
      pattern.back() = 9;
    }
    double noise = double(rng() % 12) / 100;
    for (size_t i = 0; i < n; ++i)
      s.push_back(double(rng() % 1000) / 1000 < noise ? 100 + rng() % 3 : pattern[i % period]);
    INFO("trial " << trial << ", period " << period << ", n " << n << ", noise " << noise);
    REQUIRE(find_period(s) == period_by_full_scan(s));
  }
}

namespace {

std::vector<Call> matched_calls(int ranks, int n, int late_rank, int64_t late_ns,
                                const std::vector<int64_t>& skew) {
  std::vector<Call> calls;
  for (int i = 0; i < n; ++i)
    for (int r = 0; r < ranks; ++r) {
      Call c;
      c.rank = r;
      c.nranks = ranks;
      c.comm_id = 7;
      c.seq = uint64_t(i);
      int64_t t = int64_t(i) * 1000000 + (r == late_rank ? late_ns : 10 * r);
      c.host_start = c.start = t + skew[r];
      c.end = int64_t(i) * 1000000 + late_ns + 500000 + skew[r];  // everyone leaves together
      calls.push_back(c);
    }
  return calls;
}

}  // namespace

TEST_CASE("a planted straggler is found") {
  auto calls = matched_calls(4, 50, 2, 3000000, {0, 0, 0, 0});
  auto late = measure_lateness(calls, {{0, "a"}, {1, "a"}, {2, "a"}, {3, "a"}});
  CHECK(late.matched == 50);
  CHECK(late.last_count[2] == 50);
  CHECK(late.late_ms[2][10] == Approx(3.0));
  CHECK(late.late_ms[0][10] == Approx(0.0));
}

TEST_CASE("each rank's lateness is found by collective, whatever order the ranks came in") {
  auto calls = matched_calls(5, 6, 3, 2000000, {0, 0, 0, 0, 0});
  std::reverse(calls.begin(), calls.end());  // every collective's ranks from 4 down to 0
  auto late = measure_lateness(calls, {{0, "a"}, {1, "a"}, {2, "a"}, {3, "a"}, {4, "a"}});
  const auto& by = late.by_collective;
  for (int r = 0; r < 5; ++r) {
    INFO("rank " << r);
    REQUIRE(by.find({7, 4}, r).has_value());
    CHECK(*by.find({7, 4}, r) == Approx(r == 3 ? 2.0 : 1e-5 * r).margin(1e-9));  // 10 ns a rank
  }
  CHECK_FALSE(by.find({7, 4}, 5).has_value());   // not a member
  CHECK_FALSE(by.find({7, 99}, 0).has_value());  // no such collective
  CHECK_FALSE(by.find({8, 4}, 0).has_value());
}

TEST_CASE("skewed clocks between hosts are corrected from completions") {
  // Host b's clock runs 40 ms ahead: uncorrected, ranks 2 and 3 would look late.
  int64_t skew = 40000000;
  auto calls = matched_calls(4, 30, 1, 2000000, {0, 0, skew, skew});
  auto late = measure_lateness(calls, {{0, "a"}, {1, "a"}, {2, "b"}, {3, "b"}});
  CHECK(late.correction_us[2] == Approx(40000.0).margin(1));
  CHECK(late.correction_us[0] == 0);
  CHECK(late.last_count[1] == 30);
  CHECK(late.late_ms[2][5] < 0.1);
}

TEST_CASE("collectives not seen on every rank are not matched") {
  auto calls = matched_calls(2, 5, -1, 0, {0, 0});
  calls.pop_back();  // rank 1 never recorded the last one (killed)
  auto late = measure_lateness(calls, {{0, "a"}, {1, "a"}});
  CHECK(late.matched == 4);
}
