// The one quantile convention (profiler/core/stats.h): linear interpolation
// between closest ranks, numpy's default. Expected values are numpy's
// (numpy.quantile(x, q)) for the same samples.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "profiler/core/stats.h"
#include "profiler/core/units.h"

using namespace ddpscope;

TEST_CASE(
    "the median of an odd count is the middle value, of an even count the middle two's mean") {
  CHECK(stats::median(std::vector<double>{5, 1, 3}) == 3);
  CHECK(stats::median(std::vector<double>{4, 1, 3, 2}) == 2.5);
  // 4157 and 4158 µs: the old nearest-rank rule said 4158.
  CHECK(stats::median(std::vector<double>{4158, 4100, 4157, 4300}) == 4157.5);
}

TEST_CASE("quantiles interpolate between the two closest ranks") {
  std::vector<double> v{10, 20, 30, 40, 50};  // h = q * 4
  CHECK(stats::quantile(v, 0.25) == 20);
  CHECK(stats::quantile(v, 0.1) == Approx(14));
  CHECK(stats::quantile(v, 0.95) == Approx(48));
  std::vector<double> even{1, 2, 3, 4, 5, 6, 7, 8, 9, 10};  // h = q * 9
  CHECK(stats::quantile(even, 0.95) == Approx(9.55));
  CHECK(stats::quantile(even, 0.75) == Approx(7.75));
}

TEST_CASE("q = 0 and q = 1 are the minimum and the maximum, q outside is clamped") {
  std::vector<double> v{7, -2, 11, 3};
  CHECK(stats::quantile(v, 0) == -2);
  CHECK(stats::quantile(v, 1) == 11);
  CHECK(stats::quantile(v, -0.5) == -2);
  CHECK(stats::quantile(v, 1.5) == 11);
}

TEST_CASE("a single element is every quantile, an empty sample gives 0") {
  for (double q : {0.0, 0.25, 0.5, 0.95, 1.0}) {
    CHECK(stats::quantile(std::vector<double>{42}, q) == 42);
    CHECK(stats::quantile(std::vector<double>{}, q) == 0);
    CHECK(stats::quantile_sorted(std::vector<double>{}, q) == 0);
  }
  CHECK(stats::median(std::vector<int64_t>{}) == 0);
}

TEST_CASE("a constant sample's quantiles are the constant, exactly") {
  std::vector<double> v(7, 0.1);
  for (double q : {0.0, 0.3, 0.5, 0.95, 1.0}) CHECK(stats::quantile(v, q) == 0.1);
}

TEST_CASE("integer and float samples use the same convention and give doubles") {
  CHECK(stats::median(std::vector<int64_t>{3, 4}) == 3.5);
  CHECK(stats::median(std::vector<int64_t>{1'700'000'000'000'000'001, 1'700'000'000'000'000'003,
                                           1'700'000'000'000'000'002}) ==
        double(1'700'000'000'000'000'002));
  CHECK(stats::quantile(std::vector<float>{1, 2, 3, 4}, 0.5) == 2.5);
  CHECK(stats::median(std::vector<int>{9, 1, 5, 3}) == 4);
}

TEST_CASE("in place reorders the caller's values, sorted input is read as it is") {
  std::vector<float> d{4, 3, 2, 1};
  CHECK(stats::quantile_in_place(std::span<float>(d), 0.5) == 2.5);
  CHECK(stats::quantile_in_place(std::span<float>(d), 0.95) == Approx(3.85));
  std::vector<double> sorted{1, 2, 3, 4};
  CHECK(stats::quantile_sorted(sorted, 0.5) == 2.5);
  CHECK(stats::quantile_sorted(sorted, 1) == 4);
  CHECK(stats::quantile_sorted(sorted, 0.025) == Approx(1.075));
}

TEST_CASE("every quantile matches a full sort, whatever the order and duplicates") {
  std::vector<double> v;
  for (int i = 0; i < 101; ++i) v.push_back(double((i * 37) % 23));
  std::vector<double> sorted = v;
  std::sort(sorted.begin(), sorted.end());
  for (double q = 0; q <= 1.0001; q += 0.01) {
    CHECK(stats::quantile(v, q) == stats::quantile_sorted(sorted, q));
    v.pop_back();  // odd and even sizes in turn
    sorted = v;
    std::sort(sorted.begin(), sorted.end());
  }
}

TEST_CASE("machine-readable figures drop the float noise of interpolation, nothing else") {
  CHECK(round_significant(19421.188699999995) == 19421.1887);
  CHECK(round_significant(0.1 + 0.2) == 0.3);
  CHECK(round_significant(123456789.123456) == 123456789.123456);  // ns in ms
  CHECK(round_significant(2.5e-9) == 2.5e-9);
  CHECK(round_significant(-4.0) == -4.0);
  CHECK(round_significant(0.0) == 0.0);
  CHECK(std::isnan(round_significant(std::nan(""))));
}

// The same value as printf's "%.15g" read back by strtod, bit for bit, over
// magnitudes from subnormal to huge, ties at the 15th digit, and values one
// ulp off round decimals; but DBL_MAX, whose 15 digits overflow, stays finite.
TEST_CASE("machine-readable figures: 15 digits exactly as printf and strtod round them") {
  std::mt19937_64 random(15);
  std::vector<double> values = {
      0.5e-323, 2.2250738585072014e-308, 1e-5, 0.1, 1.5, 2.5, 123456789012345.5, 999999999999999.5,
      1e15,     1.7976931348623157e308};
  for (int i = 0; i < 200000; ++i) {
    double mantissa = std::uniform_real_distribution<double>(1, 10)(random);
    values.push_back(std::ldexp(mantissa, int(random() % 2000) - 1000));
    double round = double(random() % 1000000000000000) / 1e6;  // a decimal, and its neighbours
    values.insert(values.end(), {round, std::nextafter(round, 0.0), std::nextafter(round, 1e300)});
  }
  size_t differ = 0;
  double first = 0;
  for (double v : values) {
    for (double x : {v, -v}) {
      char buf[40];
      std::snprintf(buf, sizeof buf, "%.15g", x);
      double expected = std::strtod(buf, nullptr);
      if (std::isinf(expected)) expected = x;  // rounded past DBL_MAX: kept as it is
      if (round_significant(x) != expected && differ++ == 0) first = x;
    }
  }
  INFO("first differing value " << first);
  CHECK(values.size() > 800000);
  CHECK(differ == 0);
}
