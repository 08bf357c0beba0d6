// The replay engine against an in-process fake backend that logs what it is
// asked to do and when. Timing checks are lower bounds only: a busy-wait never
// ends early, so "at least this much compute before this launch" holds on any
// machine, however loaded; nothing asserts that something was fast.
#include <time.h>

#include <catch2/catch.hpp>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "tuner/replay.h"

using namespace ddpscope::tuner;

namespace {

int64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

struct Event {
  enum Kind { add, start, wait, barrier } kind;
  int id;
  int64_t t;
};

// Communication takes `comm_ns` from its launch (0: instant).
class FakeBackend : public Backend {
 public:
  explicit FakeBackend(int64_t comm_ns = 0) : comm_ns_(comm_ns) {}
  std::string name() const override { return "fake"; }
  int add_buffer(uint64_t bytes) override {
    sizes.push_back(bytes);
    started_.push_back(0);
    log.push_back({Event::add, int(sizes.size() - 1), now_ns()});
    return int(sizes.size() - 1);
  }
  void start_allreduce(int id) override {
    started_.at(size_t(id)) = now_ns();
    log.push_back({Event::start, id, started_[size_t(id)]});
  }
  void wait(int id, int64_t* start, int64_t* end) override {
    log.push_back({Event::wait, id, now_ns()});
    *start = started_.at(size_t(id));
    *end = *start + comm_ns_;
    while (now_ns() < *end) {
    }
  }
  void barrier() override { log.push_back({Event::barrier, -1, now_ns()}); }

  std::vector<uint64_t> sizes;
  std::vector<Event> log;

 private:
  int64_t comm_ns_;
  std::vector<int64_t> started_;
};

Param param(uint64_t numel, double backward_us) {
  Param p;
  p.name = "p" + std::to_string(numel);
  p.numel = numel;
  p.backward_us = backward_us;
  return p;
}

// Six parameters, ready in reverse order (5 first); bucket 0 = {5, 4},
// bucket 1 = {3, 2}, bucket 2 = {1}; parameter 0 (ready last) in no bucket.
Workload workload() {
  Workload w;
  w.name = "fake";
  for (auto [numel, us] : std::vector<std::pair<uint64_t, double>>{
           {10, 900}, {2000, 300}, {30, 400}, {4000, 200}, {50, 250}, {6000, 350}})
    w.params.push_back(param(numel, us));
  w.forward_us = 500;
  w.optimizer_us = 300;
  return w;
}

BucketPlan plan_of(const Workload& w, const std::vector<std::vector<size_t>>& groups) {
  BucketPlan plan;
  for (const auto& g : groups) {
    Bucket b;
    b.params = g;
    for (size_t p : g) b.bytes += w.params[p].bytes();
    plan.buckets.push_back(b);
  }
  return plan;
}

std::vector<Event> of_kind(const std::vector<Event>& log, Event::Kind kind) {
  std::vector<Event> out;
  for (const auto& e : log)
    if (e.kind == kind) out.push_back(e);
  return out;
}

double compute_us(const Workload& w) {
  double sum = w.forward_us + w.optimizer_us;
  for (const auto& p : w.params) sum += p.backward_us;
  return sum;
}

}  // namespace

TEST_CASE("replay: one buffer per bucket, one barrier, then launches and waits in bucket order") {
  auto w = workload();
  auto plan = plan_of(w, {{5, 4}, {3, 2}, {1}});
  FakeBackend fake;
  ReplayOptions options{/*warmup=*/2, /*iters=*/3, /*compute_scale=*/1.0};
  auto samples = replay(w, plan, fake, options);
  REQUIRE(samples.size() == 3);
  REQUIRE(fake.sizes == std::vector<uint64_t>{(6000 + 50) * 4, (4000 + 30) * 4, 2000 * 4});

  // add, add, add, barrier, then per iteration: start 0 1 2, wait 0 1 2.
  REQUIRE(fake.log.size() == 3 + 1 + 5 * 6);
  for (int i = 0; i < 3; ++i) CHECK(fake.log[size_t(i)].kind == Event::add);
  CHECK(fake.log[3].kind == Event::barrier);
  for (size_t it = 0; it < 5; ++it)
    for (size_t k = 0; k < 3; ++k) {
      const auto& s = fake.log[4 + it * 6 + k];
      const auto& wt = fake.log[4 + it * 6 + 3 + k];
      CHECK((s.kind == Event::start && s.id == int(k)));
      CHECK((wt.kind == Event::wait && wt.id == int(k)));
    }
}

TEST_CASE("replay: a bucket goes as soon as its gradients are computed, not later") {
  auto w = workload();
  auto plan = plan_of(w, {{5, 4}, {3, 2}, {1}});
  FakeBackend fake;
  replay(w, plan, fake, ReplayOptions{1, 2, 1.0});
  auto starts = of_kind(fake.log, Event::start);
  auto waits = of_kind(fake.log, Event::wait);
  const int64_t us = 1000;
  // Ready steps: 5 (350), 4 (250) | 3 (200), 2 (400) | 1 (300) | 0 (900).
  const double before_bucket[3] = {350 + 250, 350 + 250 + 200 + 400, 350 + 250 + 200 + 400 + 300};
  for (size_t it = 0; it < 3; ++it) {
    // From the end of the previous iteration (or the barrier): optimizer,
    // forward and the backward up to each bucket's last gradient.
    const int64_t ref = it == 0 ? fake.log[3].t : waits[it * 3 - 1].t;
    const double lead = (it == 0 ? 0 : w.optimizer_us) + w.forward_us;
    for (size_t k = 0; k < 3; ++k)
      CHECK(starts[it * 3 + k].t - ref >= int64_t((lead + before_bucket[k]) * us));
    // Launched early: the compute between two buckets' last gradients lies
    // between their launches (a late launch would bunch them together).
    CHECK(starts[it * 3 + 1].t - starts[it * 3].t >= 600 * us);
    CHECK(starts[it * 3 + 2].t - starts[it * 3 + 1].t >= 300 * us);
    // Waits only after backward: parameter 0's compute follows the last launch.
    CHECK(waits[it * 3].t - starts[it * 3 + 2].t >= 900 * us);
  }
}

TEST_CASE("replay: DDP order, a complete bucket waits for the buckets before it") {
  auto w = workload();
  // Bucket 0 holds parameter 0 (ready last): bucket 1's gradients are ready
  // long before, but it may only follow bucket 0.
  auto plan = plan_of(w, {{0}, {5, 4, 3}});
  FakeBackend fake;
  replay(w, plan, fake, ReplayOptions{0, 1, 1.0});
  auto starts = of_kind(fake.log, Event::start);
  REQUIRE(starts.size() == 2);
  CHECK(starts[0].id == 0);
  CHECK(starts[1].id == 1);
  const double forward_and_backward = compute_us(w) - w.optimizer_us;
  CHECK(fake.log[2].kind == Event::barrier);
  CHECK(starts[0].t - fake.log[2].t >= int64_t(forward_and_backward * 1000));
}

TEST_CASE("replay: instant communication is never exposed, and an iteration covers all compute") {
  auto w = workload();
  auto plan = plan_of(w, {{5, 4}, {3, 2}, {1, 0}});
  FakeBackend fake;
  for (double scale : {1.0, 2.5}) {
    auto samples = replay(w, plan, fake, ReplayOptions{1, 3, scale});
    REQUIRE(samples.size() == 3);
    for (const auto& s : samples) {
      CHECK(s.exposed_ms == 0.0);
      CHECK(s.iter_ms >= compute_us(w) * scale / 1000);
      CHECK(s.comm_ms >= 0.0);
      CHECK(s.comm_ms <= s.iter_ms);
    }
  }
}

TEST_CASE("replay: slow communication shows as comm and exposed time") {
  auto w = workload();
  auto plan = plan_of(w, {{5, 4}, {3, 2}, {1, 0}});
  FakeBackend fake(/*comm_ns=*/20'000'000);
  auto samples = replay(w, plan, fake, ReplayOptions{1, 2, 1.0});
  REQUIRE(samples.size() == 2);
  for (const auto& s : samples) {
    CHECK(s.comm_ms >= 20.0);
    CHECK(s.exposed_ms > 0.0);
    CHECK(s.iter_ms >= compute_us(w) / 1000 + s.exposed_ms);
  }
}

TEST_CASE("replay: no buckets means no communication, and bad plans are refused") {
  auto w = workload();
  FakeBackend fake;
  auto samples = replay(w, BucketPlan{}, fake, ReplayOptions{0, 2, 0.0});
  REQUIRE(samples.size() == 2);
  CHECK(samples[0].comm_ms == 0.0);
  CHECK(samples[0].exposed_ms == 0.0);
  CHECK_NOTHROW(replay(w, plan_of(w, {{5}}), fake, ReplayOptions{0, 1, 0.0}));
  BucketPlan bad;
  bad.buckets.push_back(Bucket{4, ddpscope::Dtype::float32, {17}});
  CHECK_THROWS_AS(replay(w, bad, fake, ReplayOptions{0, 1, 0.0}), std::invalid_argument);
}

TEST_CASE("spin_for_us busy-waits at least the time asked") {
  for (double us : {0.0, -5.0, 50.0, 2000.0}) {
    const int64_t t0 = now_ns();
    spin_for_us(us);
    CHECK(now_ns() - t0 >= int64_t(us * 1000));
  }
}
