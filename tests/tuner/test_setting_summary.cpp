// One setting's iterations over ranks (tuner/sweep.h, summarize_setting): the
// job's iteration is its ranks' mean period, whose sum is the job's wall
// time; the comm span and the exposed time are the worst rank's.
#include <catch2/catch.hpp>

#include "tuner/sweep.h"

using namespace ddpscope::tuner;

TEST_CASE("a job's iteration is its ranks' mean period, not the slowest rank's") {
  // Two ranks kept in step: whichever starts early in an iteration waits
  // longer in it, so each rank's three periods add up to the same 300 ms.
  const std::vector<IterationSample> rank0 = {{90, 40, 5}, {110, 42, 20}, {100, 41, 10}};
  const std::vector<IterationSample> rank1 = {{110, 45, 25}, {90, 39, 2}, {100, 43, 12}};
  const auto r = summarize_setting({"gloo", 8, 1}, 3, {rank0, rank1});
  REQUIRE(r.iterations.size() == 3);
  double total = 0;
  for (const auto& it : r.iterations) {
    CHECK(it.iter_ms == Approx(100));  // the maximum would read 110, 110, 100
    total += it.iter_ms;
  }
  CHECK(total == Approx(300));  // the job's wall time over the three
  CHECK(r.iter_ms_median == Approx(100));
  CHECK(r.iterations[0].comm_ms == Approx(45));
  CHECK(r.iterations[1].exposed_ms == Approx(20));
  CHECK(r.comm_ms_median == Approx(43));
  CHECK(r.exposed_ms_median == Approx(20));
  CHECK(r.nranks == 2);
  CHECK(r.buckets == 3);
}

TEST_CASE("ranks with unequal counts are summarized over the iterations all have") {
  const std::vector<IterationSample> rank0 = {{100, 10, 1}, {120, 12, 2}};
  const std::vector<IterationSample> rank1 = {{80, 11, 3}};
  const auto r = summarize_setting({"gloo", 8, 1}, 3, {rank0, rank1});
  REQUIRE(r.iterations.size() == 1);
  CHECK(r.iterations[0].iter_ms == Approx(90));
}
