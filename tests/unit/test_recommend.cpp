// recommend() on hand-built analyses: every rule fires on its evidence and
// stays silent without it; static_graph only where DDP's own flags say it
// helps; bucket advice in terms of the instance's real cap, never DDP's
// default when the cap is unknown; a straggler flagged by its share of the step.
#include <catch2/catch.hpp>

#include "profiler/analysis/recommend.h"
#include "tests/unit/recommend_support.h"

using namespace ddpscope;
using namespace ddpscope::analysis;
using ddpscope::testing::steady_run;
using ddpscope::testing::with_setting;

namespace {

constexpr uint64_t kMiB = 1024 * 1024;

uint64_t bytes_of(double mib) { return uint64_t(mib * double(kMiB)); }

// A run of `steady` steady iterations (plus a warm-up) of `step_ms` whose
// buckets have these sizes, each exposed `exposed_us` and reaching `busbw`.
RunAnalysis run_with_buckets(const std::vector<double>& mibs, double step_ms, double exposed_us = 0,
                             double busbw = 1.0) {
  RunAnalysis run = steady_run(3, step_ms);
  for (size_t i = 0; i < mibs.size(); ++i) {
    BucketStats b;
    b.index = int(i);
    b.bytes = bytes_of(mibs[i]);
    b.calls = 30;
    b.exposed_us = exposed_us;
    b.busbw_gbps = busbw;
    run.buckets.push_back(b);
  }
  return run;
}

// DDP's own account of instance 0: this cap, the measured buckets as layout.
DdpInstanceSummary known_ddp(const RunAnalysis& run, double cap_mib) {
  DdpInstanceSummary d;
  d.buckets_from = "ddp";
  d.module = "Sequential";
  d.bucket_cap_bytes = bytes_of(cap_mib);
  d.first_bucket_bytes = bytes_of(cap_mib);
  d.rebuilt = true;
  for (const auto& b : run.buckets) d.bucket_bytes.push_back(b.bytes);
  return d;
}

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

}  // namespace

TEST_CASE("recommend: an empty run gets no advice") { CHECK(recommend(RunAnalysis{}).empty()); }

// --- static_graph -----------------------------------------------------------

TEST_CASE("static_graph: find_unused_parameters=True without static_graph gets advice") {
  auto run = run_with_buckets({1, 5, 5, 5}, 100);
  auto d = known_ddp(run, 5);
  d.find_unused_parameters = true;
  d.rebuilt = false;  // DDP never rebuilds with find_unused_parameters alone
  run.ddp = {d};
  run.roles = {{CollectiveRole::ddp_bucket, 120, 0, 300},
               {CollectiveRole::ddp_control, 33, 0, 6.6}};
  auto recs = with_setting(run, "static_graph");
  REQUIRE(recs.size() == 1);
  CHECK(recs[0].value == "True");
  CHECK_THAT(recs[0].reason, Contains("find_unused_parameters=True"));
  // Control collectives include the constructor's broadcast: no figure from them.
  CHECK_THAT(recs[0].reason, !Contains(" ms"));
  CHECK_THAT(recs[0].reason, Contains("parameter order"));
  CHECK_THAT(recs[0].reason, Contains("can_set_static_graph"));
}

TEST_CASE("static_graph: buckets DDP did rebuild are not called parameter-ordered") {
  auto run = run_with_buckets({1, 5}, 100);
  auto d = known_ddp(run, 5);
  d.find_unused_parameters = true;
  run.ddp = {d};
  auto recs = with_setting(run, "static_graph");
  REQUIRE(recs.size() == 1);
  CHECK_THAT(recs[0].reason, !Contains("parameter order"));
}

TEST_CASE("static_graph: find_unused_parameters=False with rebuilt buckets gets none") {
  // Every steady iteration reduced the same buckets: the old rule's only evidence.
  auto run = run_with_buckets({1, 5, 5, 5}, 100);
  run.ddp = {known_ddp(run, 5)};
  CHECK(with_setting(run, "static_graph").empty());
}

TEST_CASE("static_graph: unknown configuration gets none") {
  auto run = run_with_buckets({1, 5, 5, 5}, 100);
  CHECK(with_setting(run, "static_graph").empty());  // no DDP account at all
  DdpInstanceSummary pattern;  // buckets from the pattern: its flags mean nothing
  pattern.find_unused_parameters = true;
  run.ddp = {pattern};
  CHECK(with_setting(run, "static_graph").empty());
}

TEST_CASE("static_graph: already on gets none") {
  auto run = run_with_buckets({1, 5}, 100);
  auto d = known_ddp(run, 5);
  d.find_unused_parameters = d.static_graph = true;
  run.ddp = {d};
  CHECK(with_setting(run, "static_graph").empty());
}

// --- bucket_cap_mb ----------------------------------------------------------

TEST_CASE("buckets: one bucket with the whole gradient, exposed, gets a quarter of it") {
  auto run = run_with_buckets({6}, 100, 30000);
  run.ddp = {known_ddp(run, 25)};
  auto recs = with_setting(run, "bucket_cap_mb");
  REQUIRE(recs.size() == 1);
  CHECK(recs[0].value == "1.5");
  CHECK_THAT(recs[0].reason, Contains("your cap is 25 MiB; bucket 0 holds 6.00 MiB of the 6.00 MiB "
                                      "of gradients in 1 bucket"));
  CHECK_THAT(recs[0].reason, Contains("30% of the 100.0 ms step"));
}

TEST_CASE("buckets: with the cap unknown the advice names no cap") {
  auto run = run_with_buckets({6}, 100, 30000);
  auto recs = with_setting(run, "bucket_cap_mb");
  REQUIRE(recs.size() == 1);
  CHECK(recs[0].value == "1.5");
  CHECK_THAT(recs[0].reason, !Contains("cap is"));
  CHECK_THAT(recs[0].reason, !Contains("25"));
}

TEST_CASE("buckets: a dominant bucket hardly exposed gets none") {
  auto run = run_with_buckets({6}, 100, 5000);
  run.ddp = {known_ddp(run, 25)};
  CHECK(with_setting(run, "bucket_cap_mb").empty());
}

TEST_CASE("buckets: a bucket of one tensor beyond the cap: no smaller cap helps") {
  auto run = run_with_buckets({1.0, 1.1, 8.0}, 100, 20000);
  run.ddp = {known_ddp(run, 1)};
  auto recs = with_setting(run, "bucket_cap_mb");
  REQUIRE(recs.size() == 1);
  CHECK(recs[0].value == "no smaller value helps");
  CHECK_THAT(recs[0].reason, Contains("bucket 2 (8.00 MiB)"));
  CHECK_THAT(recs[0].reason, Contains("at least 7.00 MiB"));
}

TEST_CASE("buckets: an exposed last bucket gets half the instance's cap") {
  auto run = run_with_buckets({1, 5.2, 5.1, 5.3}, 100);
  run.buckets.back().exposed_us = 20000;
  run.ddp = {known_ddp(run, 5)};
  auto recs = with_setting(run, "bucket_cap_mb");
  REQUIRE(recs.size() == 1);
  CHECK(recs[0].value == "2.5");
  CHECK_THAT(recs[0].reason, Contains("your cap is 5 MiB; the last bucket (5.30 MiB)"));
  CHECK_THAT(recs[0].reason, Contains("20% of the 100.0 ms step"));
}

TEST_CASE("buckets: an exposed last bucket, cap unknown: half the largest bucket") {
  auto run = run_with_buckets({1, 5.2, 5.1, 5.3}, 100);
  run.buckets.back().exposed_us = 20000;
  auto recs = with_setting(run, "bucket_cap_mb");
  REQUIRE(recs.size() == 1);
  CHECK(recs[0].value == "2.65");
  CHECK_THAT(recs[0].reason, !Contains("cap is"));
}

TEST_CASE("buckets: an exposed small remainder last gets none") {
  auto run = run_with_buckets({5.2, 5.1, 5.3, 0.5}, 100);
  run.buckets.back().exposed_us = 20000;
  run.ddp = {known_ddp(run, 5)};
  CHECK(with_setting(run, "bucket_cap_mb").empty());
}

namespace {

// Twelve 0.26 MiB buckets at 0.2 GB/s in a run whose 8 MiB all-reduce reached
// `best_busbw`.
RunAnalysis small_buckets(double best_busbw) {
  auto run = run_with_buckets(std::vector<double>(12, 0.26), 100, 0, 0.2);
  SizeClassStats big;
  big.op = Op::allreduce;
  big.bytes = 8 * kMiB;
  big.busbw_gbps = best_busbw;
  run.collectives = {big};
  return run;
}

}  // namespace

TEST_CASE("buckets: many small slow buckets get 4x the instance's cap") {
  auto run = small_buckets(1.0);
  run.ddp = {known_ddp(run, 0.25)};
  auto recs = with_setting(run, "bucket_cap_mb");
  REQUIRE(recs.size() == 1);
  CHECK(recs[0].value == "1");
  CHECK_THAT(recs[0].reason, Contains("your cap is 0.25 MiB; 12 buckets per iteration of median "
                                      "0.26 MiB reach 0.20 GB/s"));
  CHECK_THAT(recs[0].reason, Contains("(1.00 GB/s at 8.00 MiB)"));
}

TEST_CASE("buckets: many small slow buckets, cap unknown: 4x the median bucket") {
  auto recs = with_setting(small_buckets(1.0), "bucket_cap_mb");
  REQUIRE(recs.size() == 1);
  CHECK(recs[0].value == "1.04");
  CHECK_THAT(recs[0].reason, !Contains("cap is"));
}

TEST_CASE("buckets: small buckets near the run's best bandwidth get none") {
  auto run = small_buckets(0.3);
  run.ddp = {known_ddp(run, 0.25)};
  CHECK(with_setting(run, "bucket_cap_mb").empty());
}

TEST_CASE("buckets: conflicting evidence gives one bucket_cap_mb advice, the smaller") {
  auto run = small_buckets(1.0);
  run.buckets.back().exposed_us = 20000;
  run.ddp = {known_ddp(run, 0.25)};
  auto recs = with_setting(run, "bucket_cap_mb");
  REQUIRE(recs.size() == 1);
  CHECK(recs[0].value == "0.125");
}

TEST_CASE("buckets: with two DDP instances the advice names its instance") {
  auto run = run_with_buckets({1, 5.2, 5.1}, 100);
  BucketStats d;
  d.instance = 1;
  d.bytes = 6 * kMiB;
  d.exposed_us = 30000;
  run.buckets.push_back(d);
  auto g = known_ddp(run, 5);
  g.bucket_bytes = {run.buckets[0].bytes, run.buckets[1].bytes, run.buckets[2].bytes};
  auto disc = known_ddp(run, 25);
  disc.instance = 1;
  disc.module = "Discriminator";
  disc.bucket_bytes = {d.bytes};
  run.ddp = {g, disc};
  auto recs = with_setting(run, "bucket_cap_mb");
  REQUIRE(recs.size() == 1);
  CHECK(recs[0].value == "1.5");
  CHECK_THAT(recs[0].reason, StartsWith("DDP instance 1 (Discriminator): your cap is 25 MiB;"));
}

// --- stragglers -------------------------------------------------------------

namespace {

// Ranks whose iteration-entry lateness (median) is `late_ms`, in a run of
// `step_ms` steps; rank r is last into collectives in proportion.
RunAnalysis ranks_late(const std::vector<double>& late_ms, double step_ms) {
  RunAnalysis run = run_with_buckets({1, 5}, step_ms);
  for (size_t r = 0; r < late_ms.size(); ++r) {
    RankStats s;
    s.rank = int(r);
    s.iteration_late_ms_median = late_ms[r];
    s.late_ms_median = late_ms[r] / 2;  // later buckets: less late (Gloo queues)
    s.last_share_pct = late_ms[r] > 1 ? 95 : 2.5;
    run.ranks.push_back(s);
  }
  return run;
}

std::vector<std::string> flagged_ranks(const RunAnalysis& run) {
  std::vector<std::string> out;
  for (const auto& r : recommend(run))
    if (r.value == "straggler") out.push_back(r.setting);
  return out;
}

}  // namespace

TEST_CASE("stragglers: a rank delayed 30 ms before each 175 ms step is named with its share") {
  // The case issue 14 reports: found as the latest rank, but no advice.
  auto run = ranks_late({0.0, 0.1, 30.0}, 175);
  auto recs = with_setting(run, "rank 2");
  REQUIRE(recs.size() == 1);
  CHECK(recs[0].value == "straggler");
  // 30.0 - 0.1 (the typical rank) = 29.9 ms: 17.1 % of the step.
  CHECK_THAT(recs[0].reason, Contains("29.90 ms behind the typical rank"));
  CHECK_THAT(recs[0].reason, Contains("17.1% of the 175.0 ms step"));
  CHECK(flagged_ranks(run) == std::vector<std::string>{"rank 2"});
}

TEST_CASE("stragglers: a noisy typical rank does not hide a material straggler") {
  // The old rule wanted 3x the typical rank's lateness: 30 < 3 x 12.
  auto run = ranks_late({0.0, 12.0, 30.0}, 175);
  CHECK(flagged_ranks(run) == std::vector<std::string>{"rank 2"});
}

TEST_CASE("stragglers: 2 % of the step late is no straggler") {
  auto run = ranks_late({0.0, 0.1, 3.6}, 175);  // 3.5 ms: 2.0 %
  CHECK(flagged_ranks(run).empty());
}

TEST_CASE("stragglers: two ranks, the later one flagged against the earlier") {
  // The median of two would sit halfway (5 ms) and hide half the lateness.
  auto run = ranks_late({0.05, 10.0}, 100);
  auto recs = with_setting(run, "rank 1");
  REQUIRE(recs.size() == 1);
  CHECK_THAT(recs[0].reason, Contains("9.95 ms behind the typical rank"));
  CHECK_THAT(recs[0].reason, Contains("9.9% of the 100.0 ms step"));
  CHECK(flagged_ranks(ranks_late({0.05, 2.0}, 100)).empty());  // 1.95 %
}

TEST_CASE("stragglers: on short steps the 1 ms floor decides") {
  CHECK(flagged_ranks(ranks_late({0.0, 0.0, 0.8}, 10)).empty());  // 8 % but under 1 ms
  CHECK(flagged_ranks(ranks_late({0.0, 0.0, 1.5}, 10)) == std::vector<std::string>{"rank 2"});
}

TEST_CASE("stragglers: without iterations, 3x the typical rank and the floor") {
  auto run = ranks_late({0.0, 0.2, 5.0}, 0);
  run.iterations = {};
  auto recs = with_setting(run, "rank 2");
  REQUIRE(recs.size() == 1);
  CHECK_THAT(recs[0].reason, !Contains("step"));
  CHECK(flagged_ranks([] {
          auto r = ranks_late({2.0, 2.0, 4.0}, 0);
          r.iterations = {};
          return r;
        }())
            .empty());
}

namespace {

// NCCL's choices at three all-reduce sizes (its profiler plugin): the third
// switches protocol and reaches `big_busbw`.
RunAnalysis nccl_run(double big_busbw, const char* big_proto, const char* timing) {
  RunAnalysis run;
  run.backend = "nccl";
  run.timing = timing;
  auto add = [&](double mib, const char* proto, double busbw) {
    NcclChoiceStats n;
    n.bytes = bytes_of(mib);
    n.nranks = 8;
    n.algo = "RING";
    n.proto = proto;
    n.nchannels = 8;
    n.calls = 40;
    n.busbw_gbps = busbw;
    run.nccl_choices.push_back(n);
  };
  add(1, "LL128", 60);
  add(4, "LL128", 90);
  add(16, big_proto, big_busbw);
  return run;
}

}  // namespace

TEST_CASE("nccl: a protocol switch after which bandwidth falls gets advice naming it") {
  auto recs = recommend(nccl_run(50, "SIMPLE", "cupti"));
  REQUIRE(recs.size() == 1);
  CHECK(recs[0].setting == "NCCL_PROTO");
  CHECK(recs[0].value == "^SIMPLE");
  CHECK_THAT(recs[0].reason,
             Catch::Contains("RING/LL128 to RING/SIMPLE between 4.00 and 16.00 MiB"));
  CHECK_THAT(recs[0].reason, Catch::Contains("50.00 GB/s"));
}

TEST_CASE("nccl: a switch that keeps bandwidth up, or no switch, gets none") {
  CHECK(recommend(nccl_run(80, "SIMPLE", "cupti")).empty());  // within 25 %
  CHECK(
      recommend(nccl_run(50, "LL128", "kernel_channels")).empty());  // no switch: not NCCL's choice
}

TEST_CASE("nccl: host-timed runs say nothing of NCCL's choice") {
  for (const auto& r : recommend(nccl_run(10, "SIMPLE", "host"))) CHECK(r.setting != "NCCL_PROTO");
}
