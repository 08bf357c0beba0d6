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

// Sizes (MiB) for the fit: gradients of 256 KiB, 64 MiB in all, so every cap
// from 1/4 MiB up gives buckets of that size, up to the largest a sweep
// usually tries (large buffers fall out of cache: they must be in the fit).
const char* kFitSizesMb = "0.25,1,4,16,64";
constexpr uint64_t kFitParamNumel = 65536;  // float32: 256 KiB
constexpr int kFitParams = 256;
constexpr double kProbeStepUs = 600;  // a layer's backward, as in the tests' workloads
constexpr int kProbeSteps = 16;
constexpr int kProbeIterations = 24;  // short iterations: many, for a steady median

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
                                          const std::string& workload, const std::string& sizes,
                                          int iters = 8) {
  TuneArgs run = a;
  run.backends = backend;
  run.workload = workload;
  run.bucket_mb = sizes;
  run.results_dir.clear();
  run.iters = std::max(a.iters, iters);
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

// kProbeSteps compute steps of `step_us`, then a tiny bucket: a DDP
// iteration is its slowest rank's, K·(step + delay) + t_tiny, so the delay
// is read from iteration times alone. Median over iterations.
double measure_step_delay(const TuneArgs& a, const std::string& backend,
                          const tuner::model::LinkCost& link, const std::string& dir) {
  const double tiny_ms =
      tuner::model::allreduce_s(tuner::model::Algorithm::ring, a.nproc, 64.0 * kProbeSteps, link) *
      1e3;
  json params = json::array();
  for (int i = 0; i < kProbeSteps; ++i)
    params.push_back(param("s" + std::to_string(i), 16, kProbeStepUs));
  json spec = {
      {"name", "step-delay-probe"}, {"forward_us", 0}, {"optimizer_us", 0}, {"params", params}};
  const auto path = write_workload(dir + "/probe.json", spec);
  std::vector<double> delays;
  for (const auto& it : measure(a, backend, path, "1", kProbeIterations).at(0).iterations)
    delays.push_back((it.iter_ms - tiny_ms) / kProbeSteps - kProbeStepUs / 1000);
  return std::max(0.0, median(delays));
}

// While every rank computes, each core is shared by the compute threads and
// the backend's (one busy thread per rank each): the backend gets
// min(1, C/2P) of a core instead of the min(1, C/P) it has when the ranks wait.
double comm_rate_from_cores(int ranks, long cores) {
  const double c = double(std::max(1L, cores)), p = std::max(1, ranks);
  return std::min(1.0, c / (2 * p)) / std::min(1.0, c / p);
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
  std::cerr << "calibrating " << backend << ": compute steps\n";
  c.step_delay_ms = measure_step_delay(a, backend, c.intra.cost, dir.path);
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  c.comm_rate_during_compute = comm_rate_from_cores(a.nproc, cores);
  c.comm_rate_source = "step delay: " + std::to_string(kProbeSteps) + " steps of " +
                       std::to_string(int(kProbeStepUs)) +
                       " us; comm rate: " + std::to_string(a.nproc) + " ranks sharing " +
                       std::to_string(cores) + " cores with their compute";
  return c;
}

}  // namespace ddpscope::cli
