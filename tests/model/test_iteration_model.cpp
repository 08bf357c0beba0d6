// The analytic DDP iteration against schedules worked out by hand.
#include <catch2/catch.hpp>

#include "tuner/model/iteration_model.h"

using namespace ddpscope::tuner;
using namespace ddpscope::tuner::model;

namespace {

// Four gradients of 1 MB, 1 ms of backward each, ready in reverse order
// (3, 2, 1, 0): ready at 3, 4, 5, 6 ms after a 2 ms forward; optimizer 0.5 ms.
Workload four_layers() {
  Workload w;
  w.name = "four";
  w.forward_us = 2000;
  w.optimizer_us = 500;
  for (int i = 0; i < 4; ++i) {
    Param p;
    p.name = "p" + std::to_string(i);
    p.numel = 250000;
    p.backward_us = 1000;
    w.params.push_back(p);
  }
  return w;
}

BucketPlan plan_of(std::vector<std::vector<size_t>> groups) {
  BucketPlan plan;
  for (auto& g : groups) {
    Bucket b;
    b.params = g;
    b.bytes = 1000000 * g.size();
    plan.buckets.push_back(b);
  }
  return plan;
}

}  // namespace

TEST_CASE("iteration: buckets overlap backward, only the last one's tail is exposed") {
  auto p = predict_iteration(four_layers(), plan_of({{3, 2}, {1, 0}}), {1.5, 1.5});
  // bucket 0: ready 4 (p2), runs 4..5.5; bucket 1: ready 6 (p0), runs 6..7.5.
  REQUIRE(p.buckets.size() == 2);
  CHECK(p.buckets[0].start_ms == Approx(4));
  CHECK(p.buckets[0].end_ms == Approx(5.5));
  CHECK(p.buckets[1].start_ms == Approx(6));
  CHECK(p.buckets[1].end_ms == Approx(7.5));
  CHECK(p.backward_end_ms == Approx(6));
  CHECK(p.exposed_ms == Approx(1.5));
  CHECK(p.comm_ms == Approx(3.5));
  CHECK(p.iter_ms == Approx(6 + 1.5 + 0.5));
}

TEST_CASE("iteration: one comm stream, so a ready bucket waits for the one before") {
  auto p = predict_iteration(four_layers(), plan_of({{3, 2}, {1, 0}}), {3, 3});
  // bucket 0 runs 4..7; bucket 1 is ready at 6 but starts at 7, ends at 10.
  CHECK(p.buckets[1].ready_ms == Approx(6));
  CHECK(p.buckets[1].start_ms == Approx(7));
  CHECK(p.exposed_ms == Approx(4));
  CHECK(p.iter_ms == Approx(10.5));
}

TEST_CASE("iteration: DDP launches in bucket order, however early a bucket is complete") {
  // Bucket 0 holds p0 (ready last, at 6); bucket 1 holds p3 (ready at 3) but
  // is launched only after bucket 0.
  auto p = predict_iteration(four_layers(), plan_of({{0, 1, 2}, {3}}), {1, 1});
  CHECK(p.buckets[0].ready_ms == Approx(6));
  CHECK(p.buckets[1].ready_ms == Approx(6));
  CHECK(p.buckets[1].start_ms == Approx(7));
  CHECK(p.exposed_ms == Approx(2));
}

TEST_CASE("iteration: communication slowed under compute, full speed once backward ends") {
  IterationModelOptions o;
  o.comm_rate_during_compute = 0.5;
  auto p = predict_iteration(four_layers(), plan_of({{3, 2}, {1, 0}}), {1.5, 1.5}, o);
  // bucket 0 from 4: 2 ms of compute left at half speed do 1 ms of its 1.5,
  // the last 0.5 ms runs after backward: ends at 6.5; bucket 1 then 6.5..8.
  CHECK(p.buckets[0].end_ms == Approx(6.5));
  CHECK(p.buckets[1].end_ms == Approx(8));
  CHECK(p.exposed_ms == Approx(2));
  CHECK(p.iter_ms == Approx(8.5));
  // A bucket that fits under compute even at half speed ends at start + work / rate.
  auto q = predict_iteration(four_layers(), plan_of({{3}, {2, 1, 0}}), {0.5, 0.1}, o);
  CHECK(q.buckets[0].end_ms == Approx(3 + 1.0));
}

TEST_CASE("iteration: a rate under compute that is not positive is refused") {
  IterationModelOptions o;
  o.comm_rate_during_compute = 0;
  CHECK_THROWS_WITH(predict_iteration(four_layers(), plan_of({{3, 2}, {1, 0}}), {1, 1}, o),
                    "model: the communication rate during compute must be positive");
}

TEST_CASE("iteration: instant communication hides fully, compute scale stretches compute") {
  IterationModelOptions o;
  o.compute_scale = 2;
  auto p = predict_iteration(four_layers(), plan_of({{3, 2}, {1, 0}}), {0, 0}, o);
  CHECK(p.exposed_ms == 0);
  CHECK(p.iter_ms == Approx(2 * (2 + 4 + 0.5)));
}

TEST_CASE("iteration: a plan that does not fit the workload is refused") {
  CHECK_THROWS_AS(predict_iteration(four_layers(), plan_of({{7}}), {1}), std::invalid_argument);
  CHECK_THROWS_AS(predict_iteration(four_layers(), plan_of({{0}}), {1, 2}), std::invalid_argument);
}

TEST_CASE("iteration: every compute interval ends late by the step delay") {
  IterationModelOptions o;
  o.step_delay_ms = 0.25;
  auto p = predict_iteration(four_layers(), plan_of({{3, 2}, {1, 0}}), {1.5, 1.5}, o);
  // forward 2.25; steps of 1.25: bucket 0 launched at 4.75, runs to 6.25;
  // backward ends at 7.25, bucket 1 runs 7.25..8.75; optimizer 0.75.
  CHECK(p.buckets[0].start_ms == Approx(4.75));
  CHECK(p.buckets[0].end_ms == Approx(6.25));
  CHECK(p.backward_end_ms == Approx(7.25));
  CHECK(p.buckets[1].end_ms == Approx(8.75));
  CHECK(p.iter_ms == Approx(8.75 + 0.75));
}

TEST_CASE("iteration: steps shorter than the probe's get the step delay in proportion") {
  IterationModelOptions o;
  o.step_delay_ms = 0.4;
  o.step_delay_step_us = 2000;  // measured with 2 ms steps
  auto p = predict_iteration(four_layers(), plan_of({{3, 2, 1, 0}}), {1}, o);
  // forward (2 ms) gets all 0.4; each 1 ms backward step half: 1.2 ms;
  // optimizer (0.5 ms) a quarter: 0.6. Backward ends at 2.4 + 4.8 = 7.2.
  CHECK(p.backward_end_ms == Approx(7.2));
  CHECK(p.iter_ms == Approx(7.2 + 1 + 0.6));
}
