// The decision of `ddpscope check` on constructed runs: what is a regression,
// what is noise, what is bad input.
#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <stdexcept>

#include "profiler/regression/decision.h"
#include "tests/check/lognormal_samples.h"

using namespace ddpscope::regression;
using ddpscope::InputError;
using ddpscope::testing::lognormal_samples;

namespace {

// A recorded run of 2 gloo ranks with `comm` and `busbw` samples.
RunMetrics run(const std::string& source, double comm_ms, double busbw, double sigma, uint64_t seed,
               size_t n = 40) {
  RunMetrics r;
  r.source = source;
  r.kind = "recorded run";
  r.identity = {{"world size", "2"}, {"backend", "gloo"}, {"gradient bytes per iteration", "8"}};
  r.facts = {{"buckets per iteration", "2"}};
  r.metrics.push_back({"comm", "comm", "communication per iteration", "ms", Better::lower, 1e-3,
                       lognormal_samples(n, comm_ms, sigma, seed)});
  r.metrics.push_back({"busbw", "busbw allreduce 4 x2", "busbw allreduce 4 B (2 ranks)", "GB/s",
                       Better::higher, 1e-6, lognormal_samples(n, busbw, sigma, seed + 1000)});
  return r;
}

const Verdict& verdict(const CheckResult& r, const std::string& key) {
  for (const auto& v : r.verdicts)
    if (v.key == key) return v;
  throw std::runtime_error("no verdict for " + key);
}

}  // namespace

TEST_CASE("the same job again is not a regression") {
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    auto r = check({run("a.db", 10, 1, 0.1, 100)}, {run("b.db", 10, 1, 0.1, seed)}, {});
    CHECK_FALSE(r.regressed());
    CHECK(r.decided == 2);
  }
}

TEST_CASE("a slower communication is a regression, named with its figures") {
  auto r = check({run("a.db", 10, 1, 0.1, 1)}, {run("b.db", 15, 1, 0.1, 2)}, {});
  REQUIRE(r.regressed());
  const auto& v = verdict(r, "comm");
  CHECK(v.status == Status::regression);
  CHECK(v.change == Approx(0.5).margin(0.08));
  CHECK(v.ratio.lo > 1.05);
  CHECK(v.ratio.lo < 1.5);
  CHECK(v.ratio.hi > 1.5);
  CHECK(verdict(r, "busbw allreduce 4 x2").status == Status::unchanged);
}

TEST_CASE("a change within the tolerance is not a regression, however sure") {
  // 3% slower with 2000 tight samples: certain, but below the 5% tolerance.
  auto base = run("a.db", 10, 1, 0.01, 1, 2000), cand = run("b.db", 10.3, 1, 0.01, 2, 2000);
  CheckOptions five;
  auto r = check({base}, {cand}, five);
  CHECK(verdict(r, "comm").status == Status::unchanged);
  CHECK(verdict(r, "comm").ratio.lo > 1.0);
  CheckOptions one;
  one.tolerance = 0.01;
  CHECK(verdict(check({base}, {cand}, one), "comm").status == Status::regression);
}

TEST_CASE("bus bandwidth: lower is worse, higher is an improvement") {
  auto worse = check({run("a.db", 10, 1, 0.1, 1)}, {run("b.db", 10, 0.5, 0.1, 2)}, {});
  CHECK(verdict(worse, "busbw allreduce 4 x2").status == Status::regression);
  CHECK(verdict(worse, "busbw allreduce 4 x2").change == Approx(-0.5).margin(0.05));
  auto better = check({run("a.db", 10, 1, 0.1, 1)}, {run("b.db", 10, 2, 0.1, 2)}, {});
  CHECK(verdict(better, "busbw allreduce 4 x2").status == Status::improved);
  CHECK_FALSE(better.regressed());
}

TEST_CASE("repeated baseline runs carry the run-to-run noise into the decision") {
  // Each run is tight (2%), but run medians move by -15%..+25% between runs,
  // as on a shared machine. A rerun that lands 30% above the first baseline run
  // is that noise, not a regression.
  auto rerun = run("b.db", 13, 1, 0.02, 9);
  SECTION("one run per side: the noise between runs cannot be seen") {
    auto r = check({run("a1.db", 10, 1, 0.02, 1)}, {rerun}, {});
    CHECK(verdict(r, "comm").status == Status::regression);
    CHECK_FALSE(r.run_noise_measured());
  }
  SECTION("three baseline runs: the spread is measured and covers the rerun") {
    auto r = check({run("a1.db", 10, 1, 0.02, 1), run("a2.db", 12.5, 1, 0.02, 2),
                    run("a3.db", 8.5, 1, 0.02, 3)},
                   {rerun}, {});
    const auto& v = verdict(r, "comm");
    CHECK(v.status == Status::unchanged);
    REQUIRE(v.run_noise.has_value());
    CHECK(*v.run_noise > 0.1);
    CHECK(v.baseline_runs == 3);
    CHECK(r.run_noise_measured());
  }
  SECTION("three baseline runs: a slowdown far beyond the spread still fails") {
    auto r = check({run("a1.db", 10, 1, 0.02, 1), run("a2.db", 12.5, 1, 0.02, 2),
                    run("a3.db", 8.5, 1, 0.02, 3)},
                   {run("b.db", 40, 1, 0.02, 9)}, {});
    CHECK(verdict(r, "comm").status == Status::regression);
  }
}

TEST_CASE("the confidence is shared out over the metrics checked (Bonferroni)") {
  auto r = check({run("a.db", 10, 1, 0.1, 1)}, {run("b.db", 10, 1, 0.1, 2)}, {});
  CHECK(r.level == Approx(1 - 0.05 / 2));
  CheckOptions only_comm;
  only_comm.families = {"comm"};
  auto one = check({run("a.db", 10, 1, 0.1, 1)}, {run("b.db", 10, 1, 0.1, 2)}, only_comm);
  CHECK(one.verdicts.size() == 1);
  CHECK(one.level == Approx(0.95));
}

TEST_CASE("metrics without enough samples, or on one side only, are not decided") {
  auto base = run("a.db", 10, 1, 0.1, 1), cand = run("b.db", 10, 1, 0.1, 2, 3);
  cand.metrics.push_back({"bucket", "bucket 0 4", "bucket 0 (4 B) time", "us", Better::lower, 1,
                          lognormal_samples(40, 5, 0.1, 3)});
  auto r = check({base}, {cand}, {});
  CHECK(verdict(r, "comm").status == Status::too_few_samples);
  CHECK(verdict(r, "bucket 0 4").status == Status::candidate_only);
  CHECK(r.decided == 0);
  CHECK_FALSE(r.regressed());
}

TEST_CASE("noise-free facts that differ are reported as changed") {
  auto cand = run("b.db", 10, 1, 0.1, 2);
  cand.facts = {{"buckets per iteration", "17"}};
  auto r = check({run("a.db", 10, 1, 0.1, 1)}, {cand}, {});
  REQUIRE(r.changed_facts.size() == 1);
  CHECK(r.changed_facts[0].baseline == "2");
  CHECK(r.changed_facts[0].candidate == "17");
}

TEST_CASE("only like is compared with like") {
  auto base = run("a.db", 10, 1, 0.1, 1);
  SECTION("another world size is bad input naming both files and the field") {
    auto cand = run("b.db", 10, 1, 0.1, 2);
    cand.identity[0].value = "4";
    REQUIRE_THROWS_AS(check({base}, {cand}, {}), InputError);
    try {
      check({base}, {cand}, {});
    } catch (const InputError& e) {
      std::string what = e.what();
      CHECK(what.find("a.db") != std::string::npos);
      CHECK(what.find("b.db") != std::string::npos);
      CHECK(what.find("world size 2") != std::string::npos);
    }
  }
  SECTION("a baseline run unlike the other baseline runs is bad input too") {
    auto other = run("a2.db", 10, 1, 0.1, 3);
    other.identity[1].value = "nccl";
    CHECK_THROWS_AS(check({base, other}, {run("b.db", 10, 1, 0.1, 2)}, {}), InputError);
  }
  SECTION("a recorded run against tuner results is bad input") {
    auto tuned = run("t.db (tune run 1)", 10, 1, 0.1, 2);
    tuned.kind = "tuner results";
    CHECK_THROWS_WITH(check({base}, {tuned}, {}), Catch::Contains("nothing alike"));
  }
  SECTION("no metric in common (e.g. tuner settings that differ) is bad input") {
    auto cand = run("b.db", 10, 1, 0.1, 2);
    for (auto& m : cand.metrics) m.key += " other";
    CHECK_THROWS_WITH(check({base}, {cand}, {}), Catch::Contains("no metric in common"));
  }
}

TEST_CASE("exposed time under the floor is not a relative change") {
  // No exposed communication in the baseline, 2 us in the candidate: below 1%
  // of a 30 ms iteration, negligible; 5 ms of it is a regression.
  double floor = per_iteration_floor(30);
  CHECK(floor == Approx(0.3));
  CHECK(per_iteration_floor(0) == Approx(1e-3));
  auto with_exposed = [&](const std::string& source, double ms, uint64_t seed) {
    auto r = run(source, 10, 1, 0.1, seed);
    auto values = lognormal_samples(40, ms, 0.1, seed + 7);
    if (ms == 0) values.assign(40, 0.0);
    r.metrics.push_back({"exposed", "exposed", "exposed communication per iteration", "ms",
                         Better::lower, floor, values});
    return r;
  };
  CheckOptions only_exposed;
  only_exposed.families = {"exposed"};
  auto tiny = check({with_exposed("a.db", 0, 1)}, {with_exposed("b.db", 0.002, 2)}, only_exposed);
  CHECK(verdict(tiny, "exposed").status == Status::unchanged);
  auto large = check({with_exposed("a.db", 0, 1)}, {with_exposed("b.db", 5, 2)}, only_exposed);
  CHECK(verdict(large, "exposed").status == Status::regression);
}
