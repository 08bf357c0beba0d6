// recommend()'s FSDP rules on hand-built unit figures: each fires on its
// evidence, names the units and figures it rests on, and stays silent
// without it. The evidence is what the report's FSDP table shows.
#include <catch2/catch.hpp>

#include "profiler/analysis/recommend.h"
#include "tests/unit/recommend_support.h"

using namespace ddpscope;
using namespace ddpscope::analysis;
using Catch::Matchers::Contains;
using ddpscope::testing::steady_run;
using ddpscope::testing::with_setting;

namespace {

constexpr uint64_t kKiB = 1024;

FsdpPhaseStats phase(FsdpRegionKind kind, uint64_t kib, double median_us) {
  FsdpPhaseStats p;
  p.phase = kind;
  bool reduction = kind == FsdpRegionKind::reduce_scatter;
  p.op = reduction ? Op::reduce_scatter : Op::allgather;
  p.bytes = p.wire_bytes = kib * kKiB;
  p.per_iteration = 1;
  p.calls = 20;  // 2 ranks, 10 steady steps
  p.median_us = p.p95_us = median_us;
  return p;
}

FsdpPhaseStats forward(uint64_t kib, double median_us) {
  return phase(FsdpRegionKind::forward_all_gather, kib, median_us);
}

FsdpPhaseStats exposed(FsdpPhaseStats p, double exposed_us, double steps_pct, uint64_t prefetched) {
  p.exposed_us = exposed_us;
  p.exposed_steps_pct = steps_pct;
  p.prefetched = prefetched;
  return p;
}

FsdpUnitStats unit(int n, const std::string& fqn, std::vector<FsdpPhaseStats> phases) {
  FsdpUnitStats u;
  u.unit = n;
  u.fqn = fqn;
  u.phases = std::move(phases);
  return u;
}

// One root of these units in a run of 10 steady steps of `step_ms`.
RunAnalysis fsdp_run(std::vector<FsdpUnitStats> units, double step_ms = 40) {
  RunAnalysis run = steady_run(2, step_ms);
  FsdpRootStats root;
  root.module = "Model";
  root.world_size = 2;
  root.units = std::move(units);
  run.fsdp = {root};
  return run;
}

}  // namespace

TEST_CASE("FSDP prefetch: an all-gather waited for in most steps, issued only when needed") {
  auto run = fsdp_run({unit(0, "", {forward(10, 300)}),
                       unit(1, "blocks.0", {exposed(forward(512, 900), 850, 90, 0)}),
                       unit(2, "blocks.1", {exposed(forward(512, 400), 380, 40, 0)})});
  auto recs = with_setting(run, "FSDP prefetch");
  REQUIRE(recs.size() == 1);
  CHECK(recs[0].value == "set_modules_to_forward_prefetch");
  CHECK_THAT(recs[0].reason, Contains("blocks.0 0.85 ms in 90% of steps"));
  // Exposed in 40 % of the steps only: not named.
  CHECK_THAT(recs[0].reason, !Contains("blocks.1"));
}

TEST_CASE("FSDP prefetch: prefetched and still waited for asks to prefetch further or async") {
  auto backward = exposed(phase(FsdpRegionKind::backward_all_gather, 512, 700), 650, 80, 20);
  auto run = fsdp_run({unit(0, "", {forward(512, 300)}), unit(1, "blocks.0", {backward})});
  auto recs = with_setting(run, "FSDP prefetch");
  REQUIRE(recs.size() == 1);
  // A method FSDPModule has (torch 2.15: private, no public setter).
  CHECK(recs[0].value ==
        "prefetch further ahead, or unshard asynchronously (_set_unshard_async_op(True))");
  CHECK_THAT(recs[0].reason, Contains("backward all-gathers prefetched yet still waited for: "
                                      "blocks.0 0.65 ms in 80% of steps"));
}

TEST_CASE("FSDP prefetch: the root's forward all-gather, the step's first, is not named") {
  auto run = fsdp_run({unit(0, "", {exposed(forward(10, 1700), 1680, 80, 0)}),
                       unit(1, "blocks.0", {exposed(forward(512, 600), 590, 90, 0)})});
  auto recs = with_setting(run, "FSDP prefetch");
  REQUIRE(recs.size() == 1);
  CHECK_THAT(recs[0].reason, Contains("issued only when needed: blocks.0 0.59 ms in 90% of steps"));
  CHECK_THAT(recs[0].reason, !Contains("root"));
  run.fsdp[0].units.pop_back();
  CHECK(with_setting(run, "FSDP prefetch").empty());
  // A root module without parameters of its own: its first unit (the root's
  // number) is a child's, the first all-gather of its forward.
  auto bare = fsdp_run({unit(0, "0", {exposed(forward(512, 700), 680, 80, 0)}),
                        unit(1, "1", {exposed(forward(512, 600), 590, 90, 0)})});
  recs = with_setting(bare, "FSDP prefetch");
  REQUIRE(recs.size() == 1);
  CHECK_THAT(recs[0].reason, Contains("issued only when needed: 1 0.59 ms in 90% of steps"));
  CHECK_THAT(recs[0].reason, !Contains("0.68 ms"));
}

TEST_CASE("FSDP prefetch: of several roots, a unit is named with its root") {
  auto run = fsdp_run(
      {unit(0, "", {forward(10, 300)}), unit(1, "0", {exposed(forward(512, 900), 850, 90, 0)})});
  auto second = run.fsdp[0];
  second.root = 2;
  run.fsdp.push_back(second);
  auto recs = with_setting(run, "FSDP prefetch");
  REQUIRE(recs.size() == 2);  // one per root
  CHECK_THAT(recs[0].reason, Contains("issued only when needed: 0 of root 0 0.85 ms"));
  CHECK_THAT(recs[1].reason, Contains("issued only when needed: 0 of root 2 0.85 ms"));
}

TEST_CASE("FSDP prefetch: nothing waited for in most steps, no advice") {
  auto run = fsdp_run({unit(0, "", {exposed(forward(512, 300), 280, 50, 0)}),
                       unit(1, "blocks.0", {exposed(forward(512, 300), 0, 0, 20)})});
  CHECK(with_setting(run, "FSDP prefetch").empty());
}

TEST_CASE("fully_shard wrapping: the fixed cost per all-gather dominates") {
  // 2.5 to 32.5 KiB all take about 300 us: the time is per call, not per byte.
  auto run = fsdp_run({unit(0, "", {forward(2, 281)}), unit(1, "blocks.0", {forward(32, 307)}),
                       unit(2, "blocks.1", {forward(32, 393)})});
  auto recs = with_setting(run, "fully_shard wrapping");
  REQUIRE(recs.size() == 1);
  CHECK_THAT(recs[0].reason, Contains("all-gathers of 2.0 to 32.0 KiB each take 281 us or more"));
  CHECK_THAT(recs[0].reason, Contains("the 3 all-gathers per step spend 86% of their 0.98 ms"));
}

TEST_CASE("fully_shard wrapping: a slow small all-gather that waited for a rank is not the cost") {
  // The root's 10 KiB all-gather, the step's first, also waited for the late
  // rank: 1681 us, longer than the 514 KiB ones. The quickest, 443 us, bounds
  // the fixed cost: 4 calls of 443 us are 46 % of their 3.86 ms, under half.
  // (Taken from the smallest, the cost would be all of it.)
  auto run = fsdp_run({unit(0, "", {forward(10, 1681)}), unit(1, "blocks.0", {forward(514, 732)}),
                       unit(2, "blocks.1", {forward(514, 443)}),
                       unit(3, "blocks.2", {forward(514, 1000)})});
  CHECK(with_setting(run, "fully_shard wrapping").empty());
}

TEST_CASE("fully_shard wrapping: time that grows with bytes, or sizes all alike, gets no advice") {
  auto by_bytes =
      fsdp_run({unit(0, "", {forward(64, 100)}), unit(1, "blocks.0", {forward(4096, 4000)}),
                unit(2, "blocks.1", {forward(4096, 4100)})});
  CHECK(with_setting(by_bytes, "fully_shard wrapping").empty());
  // Alike in size: time cannot tell a fixed cost from the bytes.
  auto alike =
      fsdp_run({unit(0, "", {forward(512, 300)}), unit(1, "blocks.0", {forward(512, 310)})});
  CHECK(with_setting(alike, "fully_shard wrapping").empty());
}

TEST_CASE("FSDP reduce-scatter tail: reductions after backward, from 5 % of the step") {
  auto tail = [](double us) {
    auto p = phase(FsdpRegionKind::reduce_scatter, 512, 1500);
    p.tail_us = us;
    return p;
  };
  auto run = fsdp_run({unit(0, "", {tail(1000)}), unit(1, "blocks.0", {tail(2130)})}, 43.69);
  auto recs = with_setting(run, "FSDP reduce-scatter tail");
  REQUIRE(recs.size() == 1);
  CHECK(recs[0].value == "smaller units for the modules forward runs first");
  CHECK_THAT(recs[0].reason, Contains("run 3.13 ms per step after backward ended, 7% of the "
                                      "43.69 ms step"));
  auto short_tail = fsdp_run({unit(0, "", {tail(1000)}), unit(1, "blocks.0", {tail(1000)})}, 43.69);
  CHECK(with_setting(short_tail, "FSDP reduce-scatter tail").empty());
}
