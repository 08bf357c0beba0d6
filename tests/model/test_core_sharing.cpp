// How ranks share the cores, and what a calibration on one rank count says
// about another, against hand-computed values (core_sharing.h).
#include <catch2/catch.hpp>

#include "tuner/model/core_sharing.h"

using namespace ddpscope::tuner::model;

TEST_CASE("core sharing: each busy thread's share of a core") {
  CHECK(core_share(4, 2) == 0.5);
  CHECK(core_share(1, 2) == 1);
  CHECK(core_share(8, 2) == 0.25);
  CHECK(core_share(0, 2) == 1);  // nothing known: unshared
  CHECK(core_share(4, 0) == 1);
}

TEST_CASE("core sharing: communication's speed while the ranks compute") {
  // Computing: 2P busy threads; waiting: P.
  CHECK(comm_rate_from_cores(2, 2) == 0.5);  // 1/2 of a core against a whole one
  CHECK(comm_rate_from_cores(4, 2) == 0.5);  // 1/4 against 1/2
  CHECK(comm_rate_from_cores(1, 2) == 1);    // 2 threads, 2 cores
  CHECK(comm_rate_from_cores(2, 4) == 1);
  CHECK(comm_rate_from_cores(3, 4) == Approx(4.0 / 6));
}

TEST_CASE("core sharing: a 4-rank calibration on 2 cores predicts 2 ranks") {
  const auto s = scale_ranks(4, 2, 2);
  CHECK(s.link == 0.5);  // a share of 1/2 a core per backend thread, then a whole one
  // 4 compute threads on 2 cores end a step of L after 2L (late by L); 2
  // threads on 2 cores on time.
  CHECK(s.step_delay == 0);
  // Beside an all-reduce 8 threads (late by 4L - 2L), then 4 (2L - L).
  CHECK(s.step_delay_under_comm == 0.5);
}

TEST_CASE("core sharing: more ranks than calibrated, and nothing to scale") {
  const auto s = scale_ranks(4, 8, 2);
  CHECK(s.link == 2);
  CHECK(s.step_delay == 3);             // late by 3L against L
  CHECK(s.step_delay_under_comm == 2);  // 8L - 4L against 4L - 2L
  // 2 ranks on 2 cores compute on time: their measured delay was other work,
  // which more ranks do not scale.
  const auto from_two = scale_ranks(2, 4, 2);
  CHECK(from_two.link == 2);
  CHECK(from_two.step_delay == 1);
  CHECK(from_two.step_delay_under_comm == 2);  // 4L - 2L against 2L - L
  for (const auto& same : {scale_ranks(4, 4, 2), scale_ranks(4, 2, 0), scale_ranks(0, 2, 2)}) {
    CHECK(same.link == 1);
    CHECK(same.step_delay == 1);
    CHECK(same.step_delay_under_comm == 1);
  }
}

TEST_CASE("core sharing: the cores the calibrated ranks really had") {
  // 4 ranks, steps of 600 µs 1 ms late: each had 0.6 / 1.6 of a core, 1.5
  // cores in all (other work had the rest of 2).
  CHECK(effective_cores(4, 2, 1.0, 600) == Approx(1.5));
  CHECK(effective_cores(4, 2, 0.6, 600) == Approx(2));  // 4 on 2, nothing else
  CHECK(effective_cores(4, 2, 0.1, 600) == 2);          // never more than there are
  CHECK(effective_cores(2, 2, 0.2, 600) == Approx(1.5));
  CHECK(effective_cores(4, 2, 1.0, 0) == 2);  // the probe's step unknown
  // On 1.5 cores 2 ranks are still oversubscribed: late by L/3 against 5L/3.
  const auto s = scale_ranks(4, 2, 1.5);
  CHECK(s.link == Approx(0.5));
  CHECK(s.step_delay == Approx(0.2));
  CHECK(s.step_delay_under_comm == Approx(0.5));  // 4L/3 against 8L/3
  CHECK(comm_rate_from_cores(2, 1.5) == Approx(0.5));
}
