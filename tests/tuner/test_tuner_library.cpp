// The tuner driven from C++ without the CLI: a measured sweep and a
// calibration on two Gloo ranks, each rank a process of sweep_worker
// started by the library's own launcher.
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/support/built_path.h"
#include "tests/support/subprocess.h"
#include "tuner/bucket_plan.h"
#include "tuner/calibrate.h"
#include "tuner/model/model_backend.h"
#include "tuner/sweep_launch.h"

namespace tuner = ddpscope::tuner;

namespace {

const tuner::WorkerProgram kWorker{{SWEEP_WORKER_EXE}};

// Eight 256 KiB gradients, 300 us of backward each: a short iteration.
std::string tiny_workload(const std::string& dir) {
  nlohmann::json params = nlohmann::json::array();
  for (int i = 0; i < 8; ++i)
    params.push_back({{"name", "p" + std::to_string(i)},
                      {"numel", 65536},
                      {"dtype", "float32"},
                      {"backward_us", 300}});
  const std::string path = dir + "/tiny.json";
  std::ofstream(path) << nlohmann::json{
      {"name", "tiny"},
      {"forward_us", 200},
      {"optimizer_us", 100},
      {"params", params}}.dump();
  return path;
}

tuner::SweepSpec two_gloo_ranks(const std::string& workload) {
  tuner::SweepSpec s;
  s.workload = workload;
  s.backends = {"gloo"};
  s.nproc = 2;
  s.replay.iters = 3;
  s.replay.warmup = 1;
  return s;
}

}  // namespace

TEST_CASE("a sweep of two bucket sizes on two gloo ranks") {
  const auto dir = ddpscope::testing::temp_dir("tuner-lib-sweep");
  auto s = two_gloo_ranks(tiny_workload(dir));
  s.bucket_mb = {0.5, 1};
  const auto w = tuner::load_workload(s.workload);
  const auto results = tuner::measure_sweep(s, kWorker);
  REQUIRE(results.size() == 2);
  for (size_t k = 0; k < results.size(); ++k) {
    const auto& r = results[k];
    INFO("bucket_mb " << s.bucket_mb[k]);
    CHECK(r.setting.backend == "gloo");
    CHECK(r.setting.bucket_mb == s.bucket_mb[k]);
    CHECK(r.nranks == 2);
    CHECK(r.topology == "1x2");
    CHECK(size_t(r.buckets) == tuner::plan_buckets(w, s.bucket_mb[k], 1).buckets.size());
    REQUIRE(r.iterations.size() == 3);
    for (const auto& it : r.iterations) {
      CHECK(it.comm_ms > 0);
      CHECK(it.iter_ms >= 8 * 0.3);  // at least the backward compute
      CHECK(it.exposed_ms >= 0);
    }
  }
  // Half-MiB buckets of 256 KiB gradients: twice as many as 1 MiB ones.
  CHECK(results[0].buckets > results[1].buckets);
  const auto rec = tuner::recommend(results);
  CHECK((rec.best.bucket_mb == 0.5 || rec.best.bucket_mb == 1));
}

TEST_CASE("a calibration on two gloo ranks, then the model it calibrates") {
  auto s = two_gloo_ranks("");
  s.replay.iters = 1;  // the sweep's: the calibration measures the plan's
  tuner::CalibrationPlan plan;
  // 1 to 8 MiB: the bytes term must stand out of the scheduling noise of a
  // loaded 2-core machine (at 0.25-2 MiB, with DDP jobs beside it, the fitted
  // slope came out 0 and a 4 MiB bucket "cost" less than 256 KiB).
  plan.fit_sizes_mb = "1,2,4,8";
  plan.fit_params = 32;       // 8 MiB in all
  plan.cpu_paced_passes = 2;  // pooled: what two passes measured together
  plan.fit_iterations = 8;
  plan.probe_iterations = 6;
  const auto topology = tuner::parse_topology("1x2");
  const auto c = tuner::measure_calibration(s, "gloo", topology, kWorker, plan);
  CHECK(c.backend == "gloo");
  REQUIRE(c.points.size() == 4);
  for (const auto& p : c.points) {
    CHECK(p.nranks == 2);
    CHECK(p.seconds > 0);
  }
  CHECK(c.intra.distinct_sizes == 4);
  CHECK(std::isfinite(c.intra.r2));
  CHECK(c.intra.cost.beta_s_per_byte > 0);
  CHECK(!c.inter);  // one node: no link between nodes to fit
  CHECK(c.step_delay_ms >= 0);
  CHECK(c.step_delay_under_comm_ms >= 0);
  CHECK(c.cores > 0);
  CHECK(c.comm_rate_during_compute > 0);
  CHECK(c.comm_rate_during_compute <= 1);
  // The calibration is what the model runs on: a bigger bucket costs more.
  const auto m = tuner::model::ModelBackend::calibrated(c, topology);
  CHECK(m.bucket_ms(8u << 20) > m.bucket_ms(1u << 20));
}
