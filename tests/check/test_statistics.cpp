// The statistics of `ddpscope check` on constructed samples: medians, run
// shifts and noise between repeated runs, and the bootstrap interval of a
// ratio of centres.
#include <catch2/catch.hpp>
#include <cmath>
#include <random>

#include "profiler/regression/statistics.h"
#include "tests/check/lognormal_samples.h"

using namespace ddpscope::regression;
using ddpscope::testing::lognormal_samples;

namespace {}  // namespace

TEST_CASE("a side's centre is the geometric mean of its run medians, floored") {
  CHECK(centre({{1, 2, 3}, {7, 8, 9}}, 0) == Approx(4.0));  // sqrt(2 * 8)
  CHECK(centre({{0, 0, 0}}, 0.001) == Approx(0.001));
}

TEST_CASE("bootstrap interval of a ratio of medians") {
  RunSamples base{lognormal_samples(40, 10, 0.1, 1)};
  BootstrapSpec spec{4000, 0.95, 7, 1e-3};
  SECTION("same distribution: the interval holds 1") {
    auto r = bootstrap_ratio(base, {lognormal_samples(40, 10, 0.1, 2)}, spec);
    CHECK(r.lo < 1);
    CHECK(r.hi > 1);
    CHECK(r.hi / r.lo < 1.3);  // 40 samples with 10% noise pin a median to a few %
  }
  SECTION("twice as slow: the interval holds 2 and excludes 1") {
    auto r = bootstrap_ratio(base, {lognormal_samples(40, 20, 0.1, 2)}, spec);
    CHECK(r.lo > 1.7);
    CHECK(r.hi < 2.3);
  }
  SECTION("seeded: the same inputs give the same interval") {
    RunSamples cand{lognormal_samples(40, 11, 0.1, 3)};
    auto a = bootstrap_ratio(base, cand, spec), b = bootstrap_ratio(base, cand, spec);
    CHECK(a.lo == b.lo);
    CHECK(a.hi == b.hi);
  }
  SECTION("long runs are thinned for resampling, and the interval still holds the ratio") {
    auto r = bootstrap_ratio({lognormal_samples(200000, 10, 0.1, 9)},
                             {lognormal_samples(200000, 15, 0.1, 10)}, spec);
    CHECK(r.lo < 1.5);
    CHECK(r.hi > 1.5);
    CHECK(r.lo > 1.4);
    CHECK(r.hi < 1.6);
  }
  SECTION("repeated runs: the spread of run medians widens the interval") {
    RunSamples tight{lognormal_samples(40, 10, 0.02, 4)};
    RunSamples spread{lognormal_samples(40, 8, 0.02, 5), lognormal_samples(40, 10, 0.02, 6),
                      lognormal_samples(40, 13, 0.02, 7)};
    auto one = bootstrap_ratio(tight, {lognormal_samples(40, 10, 0.02, 8)}, spec);
    auto three = bootstrap_ratio(spread, {lognormal_samples(40, 10, 0.02, 8)}, spec);
    CHECK(three.hi / three.lo > 2 * (one.hi / one.lo));
  }
}

TEST_CASE("run shifts and run-to-run noise come from repeated runs only") {
  SECTION("one run per side: nothing measured") {
    CHECK(run_shifts({{10}}, {{12}}, 0).empty());
    CHECK_FALSE(run_noise({{10}}, {{12}}, 0).has_value());
  }
  SECTION("three baseline runs: shifts from their mean log median, scaled for a new run") {
    auto shifts = run_shifts({{9}, {10}, {11}}, {{30}}, 0);
    REQUIRE(shifts.size() == 3);
    double mean = (std::log(9) + std::log(10) + std::log(11)) / 3, scale = std::sqrt(1.5);
    CHECK(shifts[0] == Approx((std::log(9) - mean) * scale));
    CHECK(shifts[2] == Approx((std::log(11) - mean) * scale));
    // The sample standard deviation of the three log medians.
    CHECK(*run_noise({{9}, {10}, {11}}, {{30}}, 0) == Approx(0.1003).epsilon(1e-2));
  }
}

TEST_CASE("a one-run candidate borrows the baseline runs' spread") {
  BootstrapSpec spec{4000, 0.95, 11, 1e-3};
  // Runs are tight inside (2%) but their medians spread from 8.5 to 12.5.
  RunSamples spread{lognormal_samples(40, 8.5, 0.02, 1), lognormal_samples(40, 10, 0.02, 2),
                    lognormal_samples(40, 12.5, 0.02, 3)};
  SECTION("a rerun 30% above the middle baseline run stays inside the interval") {
    auto r = bootstrap_ratio(spread, {lognormal_samples(40, 13, 0.02, 4)}, spec);
    CHECK(r.lo < 1.05);
  }
  SECTION("without the shifts the same rerun would look certainly slower") {
    auto r = bootstrap_ratio({spread[1]}, {lognormal_samples(40, 13, 0.02, 4)}, spec);
    CHECK(r.lo > 1.2);
  }
  SECTION("four times slower is outside any run's spread") {
    auto r = bootstrap_ratio(spread, {lognormal_samples(40, 40, 0.02, 4)}, spec);
    CHECK(r.lo > 2.5);
  }
}
