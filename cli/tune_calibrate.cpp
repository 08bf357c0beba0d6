#include "cli/tune_calibrate.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "tuner/bucket_plan.h"
#include "tuner/model/collective_cost.h"

namespace fs = std::filesystem;

namespace ddpscope::cli {
namespace {

using nlohmann::json;
using tuner::model::CommObservation;

// Sizes (MiB) for the fit: gradients of 64 KiB, 16 MiB in all, so every cap
// from 1/16 MiB up gives buckets of that size.
const char* kFitSizesMb = "0.0625,0.25,1,4,16";
constexpr uint64_t kFitParamNumel = 16384;  // float32: 64 KiB
constexpr int kFitParams = 256;
constexpr uint64_t kProbeNumel = 2 * 1024 * 1024;  // 8 MiB: long enough to outlast jitter
constexpr int kProbeSteps = 16;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty()      ? 0
         : v.size() % 2 ? v[v.size() / 2]
                        : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/ddpscope-calibrate-XXXXXX";
    if (!mkdtemp(tmpl)) throw std::runtime_error("cannot create a directory in /tmp");
    path = tmpl;
  }
  ~TempDir() { fs::remove_all(path); }
};

json param(const std::string& name, uint64_t numel, double backward_us) {
  return {{"name", name}, {"numel", numel}, {"dtype", "float32"}, {"backward_us", backward_us}};
}

std::string write_workload(const std::string& path, const json& w) {
  std::ofstream(path) << w.dump() << "\n";
  return path;
}

// The sweep as the user asked for it, but one backend, a synthetic workload.
std::vector<tuner::SettingResult> measure(const TuneArgs& a, const std::string& backend,
                                          const std::string& workload, const std::string& sizes) {
  TuneArgs run = a;
  run.backends = backend;
  run.workload = workload;
  run.bucket_mb = sizes;
  run.results_dir.clear();
  run.iters = std::max(a.iters, 8);
  run.warmup = std::max(a.warmup, 2);
  return measure_sweep(run);
}

std::vector<CommObservation> fit_points(const TuneArgs& a, const std::string& backend,
                                        const std::string& dir) {
  json params = json::array();
  for (int i = 0; i < kFitParams; ++i)
    params.push_back(param("g" + std::to_string(i), kFitParamNumel, 0));
  json spec = {{"name", "calibration"}, {"forward_us", 0}, {"optimizer_us", 0}, {"params", params}};
  const auto path = write_workload(dir + "/fit.json", spec);
  const auto w = tuner::load_workload_json(path);
  std::vector<CommObservation> points;
  for (const auto& r : measure(a, backend, path, kFitSizesMb)) {
    CommObservation o;
    o.nranks = r.nranks;
    o.seconds = r.comm_ms_median / 1000;
    for (const auto& b : tuner::plan_buckets(w, r.setting.bucket_mb, a.first_bucket_mb).buckets)
      o.bucket_bytes.push_back(double(b.bytes));
    points.push_back(o);
  }
  return points;
}

// A large bucket ready at backward start, then kProbeSteps short compute
// steps (half its fitted time in all, so it is in flight throughout), then a
// tiny bucket. Per iteration: backward took B = K·step + K·delay, and
// exposed = (t_large - rate·B) + t_tiny. Medians over iterations.
void measure_interference(const TuneArgs& a, const std::string& backend,
                          tuner::model::Calibration* c, const std::string& dir) {
  using tuner::model::Algorithm;
  const double large_ms =
      tuner::model::allreduce_s(Algorithm::ring, a.nproc, 4.0 * kProbeNumel, c->intra.cost) * 1e3;
  const double tiny_ms =
      tuner::model::allreduce_s(Algorithm::ring, a.nproc, 64.0 * kProbeSteps, c->intra.cost) * 1e3;
  const double step_us = large_ms * 1e3 / 2 / kProbeSteps;
  json params = json::array({param("large", kProbeNumel, 0)});
  for (int i = 0; i < kProbeSteps; ++i)
    params.push_back(param("s" + std::to_string(i), 16, step_us));
  json order = json::array();
  for (int i = 0; i <= kProbeSteps; ++i) order.push_back(i);
  json spec = {{"name", "interference-probe"},
               {"forward_us", 0},
               {"optimizer_us", 0},
               {"params", params},
               {"ready_order", order}};
  const auto path = write_workload(dir + "/probe.json", spec);
  std::vector<double> rates, delays;
  for (const auto& it : measure(a, backend, path, "1").at(0).iterations) {
    const double backward_ms = it.iter_ms - it.exposed_ms;
    delays.push_back((backward_ms - kProbeSteps * step_us / 1000) / kProbeSteps);
    rates.push_back((large_ms + tiny_ms - it.exposed_ms) / backward_ms);
  }
  c->comm_rate_during_compute = std::clamp(median(rates), 0.05, 1.0);
  c->step_delay_under_comm_ms = std::max(0.0, median(delays));
}

}  // namespace

tuner::model::Calibration measure_calibration(const TuneArgs& a, const std::string& backend) {
  TempDir dir;
  tuner::model::Calibration c;
  c.backend = backend;
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  c.host = host;
  std::cerr << "calibrating " << backend << " on " << a.nproc << " ranks: all-reduces at "
            << kFitSizesMb << " MiB\n";
  c.points = fit_points(a, backend, dir.path);
  c.intra = tuner::model::fit_link_cost(c.points);
  std::cerr << "calibrating " << backend << ": communication under compute\n";
  measure_interference(a, backend, &c, dir.path);
  c.comm_rate_source = "interference probe: 8 MiB all-reduce under " + std::to_string(kProbeSteps) +
                       " compute steps, " + std::to_string(a.nproc) + " ranks on " +
                       std::to_string(sysconf(_SC_NPROCESSORS_ONLN)) + " cores";
  return c;
}

}  // namespace ddpscope::cli
