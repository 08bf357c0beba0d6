// Least-squares calibration: known links recovered from their own times.
#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>

#include "tests/model/model_test_support.h"
#include "tuner/model/calibration.h"
#include "tuner/model/calibration_file.h"
#include "tuner/model/least_squares.h"

using namespace ddpscope::tuner::model;
using namespace ddpscope::tuner::model::test;

namespace {

CommObservation observe(int p, std::vector<double> buckets, const LinkCost& truth, double noise = 0,
                        Algorithm a = Algorithm::ring) {
  CommObservation o;
  o.algorithm = a;
  o.nranks = p;
  o.bucket_bytes = buckets;
  for (double b : buckets) o.seconds += allreduce_s(a, p, b, truth);
  o.seconds *= 1 + noise;
  return o;
}

const LinkCost kTruth{40e-6, 2.5e-9, 0};  // 40 µs per step, 0.4 GB/s

// The fit times the per-size ratios, as ModelBackend predicts a bucket.
double corrected(const CommObservation& o, const LinkFit& fit) {
  double s = 0;
  for (double b : o.bucket_bytes)
    s += allreduce_s(o.algorithm, o.nranks, b, fit.cost) *
         fit.by_size.at(bytes_per_step(o.algorithm, o.nranks, b));
  return s;
}

}  // namespace

TEST_CASE("least squares: an exact line comes back exactly, never negative") {
  auto x = nonnegative_least_squares({{1, 1}, {1, 2}, {1, 3}}, {3, 5, 7}, {1, 1, 1});
  CHECK(x[0] == Approx(1));
  CHECK(x[1] == Approx(2));
  // The best unconstrained intercept would be negative: it is held at 0.
  auto y = nonnegative_least_squares({{1, 1}, {1, 2}, {1, 3}}, {1, 3, 5}, {1, 1, 1});
  CHECK(y[0] == 0);
  CHECK(y[1] > 0);
}

TEST_CASE("fit: α and β from one rank count at three or more sizes") {
  std::vector<CommObservation> obs;
  for (double b : {65536.0, 262144.0, 1048576.0, 4194304.0})
    obs.push_back(observe(2, std::vector<double>(16, b), kTruth));
  auto fit = fit_link_cost(obs);
  CHECK(fit.cost.alpha_s == Approx(kTruth.alpha_s).epsilon(1e-6));
  CHECK(fit.cost.beta_s_per_byte == Approx(kTruth.beta_s_per_byte).epsilon(1e-6));
  CHECK_FALSE(fit.gamma_fitted);
  CHECK(fit.r2 == Approx(1));
  CHECK(fit.median_rel_error < 1e-9);
  CHECK(fit.distinct_sizes == 4);
}

TEST_CASE("fit: a ring folds γ into β at any rank count, a second algorithm separates them") {
  const LinkCost truth{20e-6, 1e-9, 0.6e-9};
  std::vector<CommObservation> rings;
  for (int p : {2, 4})
    for (double b : {1e5, 1e6, 4e6}) rings.push_back(observe(p, {b}, truth));
  auto folded = fit_link_cost(rings);
  CHECK_FALSE(folded.gamma_fitted);
  // A ring moves twice the bytes it reduces: β + γ/2 predicts every ring exactly.
  CHECK(folded.cost.beta_s_per_byte == Approx(1e-9 + 0.3e-9).epsilon(1e-6));
  CHECK(folded.max_rel_error < 1e-9);

  auto obs = rings;
  for (double b : {1e5, 1e6, 4e6})
    obs.push_back(observe(4, {b}, truth, 0, Algorithm::recursive_doubling));
  auto fit = fit_link_cost(obs);
  CHECK(fit.gamma_fitted);
  CHECK(fit.cost.alpha_s == Approx(truth.alpha_s).epsilon(1e-6));
  CHECK(fit.cost.beta_s_per_byte == Approx(truth.beta_s_per_byte).epsilon(1e-6));
  CHECK(fit.cost.gamma_s_per_byte == Approx(truth.gamma_s_per_byte).epsilon(1e-6));
}

TEST_CASE("fit: ±3% noise moves the parameters by little, and the fit says so") {
  std::vector<CommObservation> obs;
  const double noise[] = {0.03, -0.03, 0.02, -0.02, 0.01};
  int i = 0;
  for (double b : {65536.0, 262144.0, 1048576.0, 4194304.0, 16777216.0})
    obs.push_back(observe(2, {b}, kTruth, noise[i++]));
  auto fit = fit_link_cost(obs);
  CHECK(fit.cost.alpha_s == Approx(kTruth.alpha_s).epsilon(0.25));
  CHECK(fit.cost.beta_s_per_byte == Approx(kTruth.beta_s_per_byte).epsilon(0.05));
  CHECK(fit.max_rel_error > 0.005);
  CHECK(fit.max_rel_error < 0.06);
}

TEST_CASE("fit: message steps and bytes that overlap are fitted as the longer of the two") {
  // Ranks waiting to be scheduled while a shaped link moves the bytes: 2 ms
  // per step or 8.4 ns per byte, whichever is longer (as over 1 Gbit/s).
  const LinkCost truth{2e-3, 8.4e-9, 0, true};
  std::vector<CommObservation> obs;
  for (double b : {262144.0, 1048576.0, 4194304.0, 16777216.0})
    obs.push_back(observe(4, std::vector<double>(4, b), truth));
  auto fit = fit_link_cost(obs);
  CHECK(fit.cost.overlapped);
  CHECK(fit.cost.alpha_s == Approx(truth.alpha_s).epsilon(1e-6));
  CHECK(fit.cost.beta_s_per_byte == Approx(truth.beta_s_per_byte).epsilon(1e-6));
  CHECK(fit.max_rel_error < 1e-9);
  // The buckets are summed one by one: 6 steps of 2 ms (12 ms) against 1.5 ·
  // 256 KiB at 8.4 ns/B (3.3 ms) is 12 ms a bucket, not the maximum of sums.
  CHECK(allreduce_s(Algorithm::ring, 4, 262144, truth) == Approx(12e-3));
}

TEST_CASE("size correction: log-linear between measured sizes, the nearest end beyond") {
  const SizeCorrection none;
  CHECK(none.at(12345) == 1);
  const SizeCorrection c({{4096, 1.5}, {1024, 1.0}, {16384, 0.5}});  // any order
  CHECK(c.points().front().bytes_per_step == 1024);
  CHECK(c.at(1024) == Approx(1.0));
  CHECK(c.at(2048) == Approx(1.25));  // halfway in log between 1024 and 4096
  CHECK(c.at(8192) == Approx(1.0));   // halfway between 4096 and 16384
  CHECK(c.at(10) == Approx(1.0));     // below the smallest: its ratio
  CHECK(c.at(1e9) == Approx(0.5));    // above the largest: its ratio
}

TEST_CASE("fit: per-size ratios make every point come back, a first bucket of another size too") {
  // A machine whose 256 KiB all-reduces cost 40 % more than any line says
  // (the crossover of steps and bytes); every setting starts with a 1 MiB
  // bucket, as DDP's first bucket does.
  auto bump = [](double bytes) { return bytes == 262144 ? 1.4 : 1.0; };
  std::vector<CommObservation> obs;
  for (double size : {65536.0, 262144.0, 1048576.0, 4194304.0, 16777216.0}) {
    std::vector<double> buckets{1048576};
    for (int i = 0; i < 32; ++i) buckets.push_back(size);
    CommObservation o = observe(4, buckets, kTruth);
    o.seconds = 0;
    for (double b : buckets) o.seconds += allreduce_s(Algorithm::ring, 4, b, kTruth) * bump(b);
    obs.push_back(o);
  }
  const auto fit = fit_link_cost(obs);
  REQUIRE(fit.by_size.points().size() == 5);
  CHECK(fit.median_rel_error > 0.001);  // the line alone misses
  for (const auto& o : obs) CHECK(corrected(o, fit) == Approx(o.seconds).epsilon(0.005));
  // The bumped size's ratio stands out from its neighbours'.
  const double at = fit.by_size.at(262144.0 / 4);
  CHECK(at > 1.25 * fit.by_size.at(65536.0 / 4));
  CHECK(at > 1.25 * fit.by_size.at(1048576.0 / 4));
}

TEST_CASE("fit: points on the fitted line get ratios of one") {
  std::vector<CommObservation> obs;
  for (double size : {1e5, 1e6, 1e7}) obs.push_back(observe(4, {size, size}, kTruth));
  const auto fit = fit_link_cost(obs);
  for (const auto& p : fit.by_size.points()) CHECK(p.ratio == Approx(1).epsilon(1e-6));
}

TEST_CASE("fit: fewer than three sizes, or a bad point, is refused") {
  std::vector<CommObservation> two{observe(2, {1e5}, kTruth), observe(2, {1e6}, kTruth),
                                   observe(2, {1e6}, kTruth)};
  CHECK_THROWS_WITH(fit_link_cost(two),
                    Catch::Contains("2 distinct bucket sizes") && Catch::Contains("at least 3"));
  auto bad = two;
  bad.push_back(observe(2, {4e6}, kTruth));
  bad.back().seconds = 0;
  CHECK_THROWS_AS(fit_link_cost(bad), std::invalid_argument);
}

TEST_CASE("calibration file: round trip, and one clear line for a bad file") {
  Calibration c;
  c.backend = "gloo";
  c.host = "vm";
  c.intra.cost = kTruth;
  c.intra.observations = 5;
  c.comm_rate_during_compute = 0.5;
  c.points = {observe(2, {1e6}, kTruth)};
  const std::string path = "test_model_calibration.json";
  save_calibration(path, c);
  auto back = load_calibration(path);
  CHECK(back.backend == "gloo");
  CHECK(back.intra.cost.alpha_s == Approx(kTruth.alpha_s));
  CHECK(back.intra.cost.beta_s_per_byte == Approx(kTruth.beta_s_per_byte));
  CHECK(back.comm_rate_during_compute == 0.5);
  CHECK_FALSE(back.inter.has_value());
  CHECK(back.ranks == 2);  // no `ranks` set: its points' (2 ranks)
  c.ranks = 4;
  save_calibration(path, c);
  CHECK(load_calibration(path).ranks == 4);

  CHECK_FALSE(back.intra_pair.has_value());
  c.intra_pair = link_fit({400e-6, 1.1e-9, 0});
  c.intra_pair->by_size = SizeCorrection({{131072, 1.2}});
  save_calibration(path, c);
  back = load_calibration(path);
  REQUIRE(back.intra_pair.has_value());
  CHECK(back.intra_pair->cost.alpha_s == Approx(400e-6));
  CHECK(back.intra_pair->cost.beta_s_per_byte == Approx(1.1e-9));
  CHECK(back.intra_pair->by_size.at(131072) == Approx(1.2));
  c.intra_pair.reset();
  CHECK_FALSE(back.pair_step_delays.has_value());
  c.pair_step_delays = Calibration::StepDelays{0.12, 0.28};
  save_calibration(path, c);
  back = load_calibration(path);
  REQUIRE(back.pair_step_delays.has_value());
  CHECK(back.pair_step_delays->alone_ms == Approx(0.12));
  CHECK(back.pair_step_delays->under_comm_ms == Approx(0.28));
  c.pair_step_delays.reset();

  c.inter = InterLinkFit{link_fit({300e-6, 8.5e-9, 0, true}), "2x2:inter=1gbit", 1};
  c.inter->fit.observations = 4;
  c.inter->fit.by_size = SizeCorrection({{65536, 1.3}, {262144, 0.9}});
  c.inter_points = {observe(4, {1e6}, c.inter->fit.cost)};
  save_calibration(path, c);
  back = load_calibration(path);
  REQUIRE(back.inter.has_value());
  CHECK(back.inter->topology == "2x2:inter=1gbit");
  CHECK(back.inter->bandwidth_gbps == 1);
  CHECK(back.inter->fit.cost.alpha_s == Approx(300e-6));
  CHECK(back.inter->fit.cost.beta_s_per_byte == Approx(8.5e-9));
  CHECK(back.inter->fit.observations == 4);
  CHECK(back.inter->fit.cost.overlapped);
  CHECK_FALSE(back.intra.cost.overlapped);
  CHECK(back.intra.by_size.empty());
  REQUIRE(back.inter->fit.by_size.points().size() == 2);
  CHECK(back.inter->fit.by_size.at(65536) == Approx(1.3));
  CHECK(back.inter->fit.by_size.at(262144) == Approx(0.9));
  CHECK_FALSE(back.inter_path.has_value());
  c.inter_path = InterLinkFit{link_fit({200e-6, 3.5e-9, 0}), "2x2", 0};
  save_calibration(path, c);
  back = load_calibration(path);
  REQUIRE(back.inter_path.has_value());
  CHECK(back.inter_path->topology == "2x2");
  CHECK(back.inter_path->bandwidth_gbps == 0);
  CHECK(back.inter_path->fit.cost.beta_s_per_byte == Approx(3.5e-9));
  std::ofstream(path) << "{\"kind\": \"ddpscope-calibration\", \"backend\": \"gloo\", "
                         "\"comm_rate_during_compute\": 1, \"intra\": {\"alpha_us\": 1, "
                         "\"beta_ns_per_byte\": 1, \"gamma_ns_per_byte\": 0, \"by_size\": "
                         "[{\"bytes_per_step\": 1024, \"ratio\": 0}]}}";
  CHECK_THROWS_WITH(load_calibration(path), path + ": intra: by_size: 'ratio' must be positive");
  std::ofstream(path) << "{\"kind\": \"ddpscope-calibration\", \"backend\": \"gloo\", "
                         "\"comm_rate_during_compute\": 1, \"intra\": {\"alpha_us\": 1, "
                         "\"beta_ns_per_byte\": 1, \"gamma_ns_per_byte\": 0}, "
                         "\"pair_step_delays\": {\"alone_ms\": -1, \"under_comm_ms\": 0}}";
  CHECK_THROWS_WITH(load_calibration(path),
                    path + ": pair_step_delays: 'alone_ms' must be a non-negative number");
  // A file written before `ranks`: its first point's; none: unknown (0).
  std::ofstream(path) << "{\"kind\": \"ddpscope-calibration\", \"backend\": \"gloo\", "
                         "\"comm_rate_during_compute\": 1, \"intra\": {\"alpha_us\": 1, "
                         "\"beta_ns_per_byte\": 1, \"gamma_ns_per_byte\": 0}, \"points\": "
                         "[{\"nranks\": 4, \"seconds\": 1}]}";
  CHECK(load_calibration(path).ranks == 4);
  std::ofstream(path) << "{\"kind\": \"ddpscope-calibration\", \"backend\": \"gloo\", "
                         "\"comm_rate_during_compute\": 1, \"intra\": {\"alpha_us\": 1, "
                         "\"beta_ns_per_byte\": 1, \"gamma_ns_per_byte\": 0}}";
  CHECK(load_calibration(path).ranks == 0);
  std::ofstream(path) << "{\"kind\": \"ddpscope-calibration\", \"backend\": \"gloo\", "
                         "\"comm_rate_during_compute\": 1, \"intra\": {\"alpha_us\": 1, "
                         "\"beta_ns_per_byte\": 1, \"gamma_ns_per_byte\": 0}, \"inter\": "
                         "{\"alpha_us\": 1, \"beta_ns_per_byte\": 8, \"gamma_ns_per_byte\": 0}}";
  CHECK_THROWS_WITH(load_calibration(path),
                    path + ": inter: 'bandwidth_gbps' is missing or not a number");

  std::ofstream(path) << "{\"kind\": \"ddpscope-calibration\", \"backend\": \"gloo\", "
                         "\"intra\": {\"alpha_us\": -1}}";
  CHECK_THROWS_WITH(load_calibration(path), Catch::StartsWith(path + ": intra: 'alpha_us'"));
  std::ofstream(path) << "[1, 2";
  CHECK_THROWS_WITH(load_calibration(path), Catch::StartsWith(path + ": invalid JSON at byte 6"));
  std::ofstream(path) << "[1, 2]";
  CHECK_THROWS_WITH(load_calibration(path), path + ": not a JSON object");
  std::remove(path.c_str());
  CHECK_THROWS_WITH(load_calibration(path), Catch::StartsWith(path + ": cannot open the file"));
}
