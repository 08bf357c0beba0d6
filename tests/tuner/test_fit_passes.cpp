// A calibration fit measured in passes (tuner/fit_passes.h): per size, the
// median over every pass's iterations, or the slowest pass where the passes
// saw the machine in different states.
#include <catch2/catch.hpp>

#include "tuner/fit_passes.h"
#include "tuner/sweep.h"

using namespace ddpscope::tuner;

namespace {

// One pass at one size: its iterations' comm times, summarized as a sweep does.
SettingResult pass_of(const std::vector<double>& comm_ms) {
  std::vector<IterationSample> rank;
  for (double ms : comm_ms) rank.push_back({ms + 1, ms, 0});
  return summarize_setting({"gloo", 1, 1}, 4, {rank});
}

}  // namespace

TEST_CASE("one slow pass moves the pooled median by its samples, not to its median") {
  const auto a = pass_of({100, 102, 104, 130});
  const auto b = pass_of({101, 103, 105, 107});
  const auto slow = pass_of({140, 141, 142, 143});  // 1.4x: the same state, a busy moment
  const auto p = pool_passes({&a, &b, &slow});
  CHECK(!p.states_differ);
  // Twelve samples: the median is the mean of the 6th and 7th, 105 and 107
  // (the passes' medians, 103, 104 and 141.5, have 104 for theirs).
  CHECK(p.ms == Approx(106));
  CHECK(p.fastest_pass_ms == Approx(103));
  CHECK(p.slowest_pass_ms == Approx(141.5));
}

TEST_CASE("passes in two states keep the slower, whatever the majority") {
  const auto fast1 = pass_of({400, 410, 420});
  const auto fast2 = pass_of({390, 400, 410});
  const auto slow = pass_of({1500, 1550, 1600});  // > kFitStateRatio x the fastest
  const auto p = pool_passes({&fast1, &fast2, &slow});
  CHECK(p.states_differ);
  CHECK(p.ms == Approx(1550));
}

TEST_CASE("one pass is its own median") {
  const auto only = pass_of({5, 9, 7, 6, 30});
  const auto p = pool_passes({&only});
  CHECK(!p.states_differ);
  CHECK(p.ms == Approx(7));
}

TEST_CASE("a pass with no iterations is an error, not a zero cost") {
  const SettingResult empty;
  CHECK_THROWS_AS(pool_passes({&empty}), std::invalid_argument);
}
