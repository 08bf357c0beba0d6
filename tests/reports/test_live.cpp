// The live line and the Prometheus exposition of a live look (reports/live.h).
// The format's real parser reads the file in tests/integration/test_live.py;
// here the parts a parser would take in its stride: label escaping, NaN.
#include <catch2/catch.hpp>
#include <cmath>
#include <sstream>

#include "reports/live.h"

using namespace ddpscope;

namespace {

analysis::LiveFigures sample() {
  analysis::LiveFigures live;
  live.since_ns = 1'000'000'000'000'000'000;
  live.until_ns = live.since_ns + 30'000'000'000;
  live.files = 2;
  live.steps = 120;
  live.window.iterations.median_ms = 200;
  live.window.iterations.comm_median_ms = 80;
  live.window.iterations.exposed_median_ms = 20;
  analysis::BucketStats b;
  b.index = 3;
  b.median_us = 9100;
  live.window.buckets = {b};
  live.ranks = {{0, "node\"a\\b", 120, 200, 80, 20, 0, 0},
                {1, "node-b", 120, 201, 80, NAN, 41.5, 3}};
  return live;
}

}  // namespace

TEST_CASE("the live line: steps, step time, comm and exposed with shares, slowest, latest") {
  CHECK(reports::live_line(sample()) ==
        "ddpscope: step 120 | 200.0 ms/step | comm 80.0 ms (40%) | exposed 20.0 ms (10%) | "
        "slowest bucket 3 9.1 ms | rank 1 late 41.5 ms | 3 dropped");
  analysis::LiveFigures none;
  CHECK(reports::live_line(none) == "ddpscope: waiting for the ranks' first flush");
}

TEST_CASE("Prometheus: label values escaped, NaN spelled as the format does") {
  std::ostringstream out;
  reports::write_prometheus(sample(), "job \"x\"", out);
  std::string text = out.str();
  CHECK_THAT(text, Catch::Contains("ddpscope_steps_total{job=\"job \\\"x\\\"\",rank=\"0\","
                                   "host=\"node\\\"a\\\\b\"} 120\n"));
  CHECK_THAT(text, Catch::Contains("ddpscope_exposed_comm_seconds_per_step{job=\"job \\\"x\\\"\","
                                   "rank=\"1\",host=\"node-b\"} NaN\n"));
  CHECK_THAT(text, Catch::Contains("# TYPE ddpscope_bucket_seconds gauge\n"));
  CHECK_THAT(text, Catch::Contains("bucket=\"3\",op=\"allreduce\"} 0.0091\n"));
}

namespace {

// An FSDP job's window: the root and one block, the block's forward all-gather
// the most exposed.
analysis::LiveFigures fsdp_sample() {
  analysis::LiveFigures live = sample();
  live.window.buckets.clear();
  analysis::FsdpUnitStats root, block;
  block.fqn = "blocks.2";
  analysis::FsdpPhaseStats gather, reduce;
  gather.median_us = 3000;
  gather.exposed_us = 2500;
  gather.per_iteration = 1;
  gather.bytes = 1 << 20;
  gather.busbw_gbps = 0.5;
  reduce.phase = FsdpRegionKind::reduce_scatter;
  reduce.op = Op::reduce_scatter;
  reduce.exposed_us = 400;
  block.phases = {gather, reduce};
  root.phases = {reduce};
  live.window.fsdp = {{.root = 0, .module = "Model", .world_size = 2, .units = {root, block}}};
  live.window.iterations.fsdp_exposed_median_ms = 2.9;
  for (auto& r : live.ranks) {
    r.fsdp_comm_ms = 7;
    r.fsdp_exposed_ms = 2.9;
  }
  return live;
}

}  // namespace

TEST_CASE("the live line of an FSDP job names its most exposed unit, and FSDP's part beside DDP") {
  auto live = fsdp_sample();
  CHECK(reports::live_line(live) ==
        "ddpscope: step 120 | 200.0 ms/step | comm 80.0 ms (40%) | exposed 20.0 ms (10%) | "
        "most exposed unit blocks.2 forward_all_gather 2.5 ms | rank 1 late 41.5 ms | 3 dropped");
  live.window.ddp.emplace_back();  // DDP's steps are the line's: FSDP's exposed said apart
  CHECK_THAT(reports::live_line(live),
             Catch::Contains("| FSDP exposed 2.9 ms | most exposed unit blocks.2"));
  // Of several roots, the unit's is named (a root by its first unit's number).
  auto second = live.window.fsdp[0];
  second.root = 3;
  second.units[1].phases[0].exposed_us = 2600;
  live.window.fsdp.push_back(second);
  CHECK_THAT(reports::live_line(live),
             Catch::Contains("| most exposed unit blocks.2 of root 3 forward_all_gather 2.6 ms"));
}

TEST_CASE("Prometheus: FSDP's series per rank and per unit and phase, only for FSDP jobs") {
  std::ostringstream out;
  reports::write_prometheus(fsdp_sample(), "j", out);
  std::string text = out.str();
  CHECK_THAT(text, Catch::Contains("ddpscope_fsdp_exposed_comm_seconds_per_step{job=\"j\","
                                   "rank=\"1\",host=\"node-b\"} 0.0029\n"));
  CHECK_THAT(text, Catch::Contains("ddpscope_fsdp_unit_exposed_seconds_per_step{job=\"j\","
                                   "root=\"0\",unit=\"blocks.2\",phase=\"forward_all_gather\","
                                   "op=\"allgather\"} 0.0025\n"));
  CHECK_THAT(text, Catch::Contains(
                       "unit=\"(root)\",phase=\"reduce_scatter\",op=\"reduce_scatter\"} 0.0004\n"));
  CHECK_THAT(text,
             Catch::Contains("ddpscope_fsdp_unit_bytes{job=\"j\",root=\"0\",unit=\"blocks.2\""));
  std::ostringstream ddp;
  reports::write_prometheus(sample(), "j", ddp);
  CHECK_THAT(ddp.str(), !Catch::Contains("fsdp"));
}
