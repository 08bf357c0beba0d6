#include "tuner/calibrate.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "profiler/core/rank_env.h"
#include "profiler/core/stats.h"
#include "tuner/bucket_plan.h"
#include "tuner/fit_passes.h"
#include "tuner/model/collective_cost.h"
#include "tuner/model/core_sharing.h"
#include "tuner/model/model_backend.h"
#include "tuner/sweep_launch.h"
#include "tuner/topology.h"

namespace fs = std::filesystem;

namespace ddpscope::tuner {
namespace {

using model::CommObservation;
using nlohmann::json;

constexpr double kNoProgress = 1e-3;  // the model's rate for "none" (it must be positive)
constexpr double kProbeStepUs = 600;  // a layer's backward, as in the tests' workloads
constexpr uint64_t kProbeLargeNumel = 2 * 1024 * 1024;  // 8 MiB: outlasts the probe's backward
constexpr int kProbeSteps = 16;
constexpr uint64_t kFitParamNumel = 65536;  // float32: 256 KiB

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
struct Measure {
  SweepSpec sweep;
  WorkerProgram program;
  CalibrationPlan plan;
};

// The plan's iterations, not the sweep's: a user who measures a sweep
// longer for a steadier median does not make the calibration longer with it.
std::vector<SettingResult> measure(const Measure& m, const std::string& backend,
                                   const std::string& workload, const std::vector<double>& sizes,
                                   int iters) {
  SweepSpec run = m.sweep;
  run.backends = {backend};
  run.workload = workload;
  run.bucket_mb = sizes;
  run.results_dir.clear();
  run.replay.iters = iters;
  run.replay.warmup = 2;
  return measure_sweep(run, m.program);
}

// Back-to-back all-reduces of `nparams` gradients of 256 KiB at `sizes`, on
// the topology of `m` (none: this machine's loopback), measured in passes:
// per size, what every pass measured together.
class FitRuns {
 public:
  FitRuns(const Measure& m, const std::string& dir, int nparams, const std::string& sizes)
      : m_(m), sizes_mb_(sizes), sizes_(parse_bucket_sizes(sizes)) {
    json params = json::array();
    for (int i = 0; i < nparams; ++i)
      params.push_back(param("g" + std::to_string(i), kFitParamNumel, 0));
    json spec = {
        {"name", "calibration"}, {"forward_us", 0}, {"optimizer_us", 0}, {"params", params}};
    workload_ = write_workload(dir + "/fit-" + std::to_string(nparams) + ".json", spec);
  }
  const std::string& sizes_mb() const { return sizes_mb_; }
  void measure_pass(const std::string& backend) {
    passes_.push_back(measure(m_, backend, workload_, sizes_, m_.plan.fit_iterations));
  }
  // Per size, what every pass measured (pool_passes, fit_passes.h).
  std::vector<CommObservation> observations() const;

 private:
  Measure m_;
  std::string sizes_mb_;  // as the plan writes them, for the log
  std::vector<double> sizes_;
  std::string workload_;
  std::vector<std::vector<SettingResult>> passes_;
};

std::vector<CommObservation> FitRuns::observations() const {
  const auto w = load_workload_json(workload_);
  std::vector<CommObservation> points;
  for (size_t i = 0; i < passes_.at(0).size(); ++i) {
    std::vector<const SettingResult*> same_size;
    for (const auto& pass : passes_) same_size.push_back(&pass.at(i));
    const auto& first = *same_size[0];
    const auto pooled = pool_passes(same_size);
    if (pooled.states_differ)
      fprintf(stderr,
              "calibration: all-reduces of %g MiB buckets on %d ranks took %.0f ms in one pass, "
              "%.0f ms in another: this machine's per-message cost changes over time; the "
              "slower is kept\n",
              first.setting.bucket_mb, first.nranks, pooled.fastest_pass_ms,
              pooled.slowest_pass_ms);
    CommObservation o;
    o.nranks = first.nranks;
    o.seconds = pooled.ms / 1000;
    for (const auto& b : plan_buckets(w, first.setting.bucket_mb, m_.sweep.first_bucket_mb).buckets)
      o.bucket_bytes.push_back(double(b.bytes));
    points.push_back(o);
  }
  return points;
}

// One pass of a fit, measured and returned.
std::vector<CommObservation> fit_points(const Measure& m, const std::string& backend,
                                        const std::string& dir, int nparams,
                                        const std::string& sizes) {
  FitRuns runs(m, dir, nparams, sizes);
  runs.measure_pass(backend);
  return runs.observations();
}

// kProbeSteps compute steps of kProbeStepUs, then a tiny bucket; with
// `large`, an 8 MiB bucket ready before them. Returns the iterations.
std::vector<IterationSample> probe(const Measure& m, const std::string& backend, bool large,
                                   const std::string& dir) {
  json params = json::array();
  if (large) params.push_back(param("large", kProbeLargeNumel, 0));
  for (int i = 0; i < kProbeSteps; ++i)
    params.push_back(param("s" + std::to_string(i), 16, kProbeStepUs));
  json order = json::array();
  for (size_t i = 0; i < params.size(); ++i) order.push_back(i);
  json spec = {{"name", "step-delay-probe"},
               {"forward_us", 0},
               {"optimizer_us", 0},
               {"params", params},
               {"ready_order", order}};
  const auto path = write_workload(dir + "/probe.json", spec);
  return measure(m, backend, path, {1}, m.plan.probe_iterations).at(0).iterations;
}

// From iteration times alone (the job's, its ranks' mean period: the tiny
// all-reduce at the end waits for the slowest rank's backward, so every
// rank's period carries it).
// Without the large bucket: iteration = B + t_tiny, B = K·(step + delay).
// With it, in flight from the start: while it outlasts backward, iteration =
// B' + (t_large - rate·B') + t_tiny, and B' - B is the extra delay of K
// steps under communication. Medians over iterations.
// On one node of the topology's rank count: the delays are the cores'
// (every rank of every emulated node shares them), and the large all-reduce
// must be paced by the cores for B' to show (over a slow link it outlasts
// backward at any compute speed).
model::Calibration::StepDelays measure_step_delays(const Measure& m, const std::string& backend,
                                                   const Topology& topology,
                                                   const model::Calibration& c,
                                                   const std::string& dir) {
  const auto mb = model::ModelBackend::calibrated(c, topology);
  const double tiny_ms = mb.bucket_ms(64 * kProbeSteps);
  const double large_ms = mb.bucket_ms(4 * kProbeLargeNumel);
  const double step_ms = kProbeStepUs / 1000;
  const double rate = mb.comm_rate_during_compute();
  std::vector<double> delays, extra;
  for (const auto& it : probe(m, backend, false, dir))
    delays.push_back((it.iter_ms - tiny_ms) / kProbeSteps - step_ms);
  model::Calibration::StepDelays d;
  d.alone_ms = std::max(0.0, stats::median(delays));
  const double backward_ms = kProbeSteps * (step_ms + d.alone_ms);
  for (const auto& it : probe(m, backend, true, dir)) {
    double with_comm = rate < 1 ? (it.iter_ms - large_ms - tiny_ms) / (1 - rate) : 0;
    if (rate * with_comm >= large_ms)
      with_comm = it.iter_ms - tiny_ms;  // it finished under compute
    extra.push_back((with_comm - backward_ms) / kProbeSteps);
  }
  d.under_comm_ms = std::max(0.0, stats::median(extra));
  return d;
}

// The same ranks on one node: the ranks of an emulated topology share this
// machine's cores whatever their nodes. Emulated, that node is a network
// namespace as the topology's are (its own loopback): the same kind of
// node the sweeps run on.
Measure on_one_node(const Measure& m, const Topology& topology) {
  Measure one = m;
  if (topology.nodes > 1) one.sweep.topology = "1x" + std::to_string(topology.nranks());
  return one;
}

// Two ranks on one node (a network namespace where the topology is
// emulated, as on_one_node): the pace of a ring's steps when each rank has
// cores to spare, which fewer ranks than calibrated cannot beat. Only where
// more than two ranks are calibrated and the machine has two cores.
std::optional<Measure> pair_on_one_node(const Measure& m, const Topology& topology) {
  if (topology.nranks() <= 2 || sysconf(_SC_NPROCESSORS_ONLN) < 2) return std::nullopt;
  Measure pair = m;
  pair.sweep.nproc = 2;
  if (!m.sweep.topology.empty()) pair.sweep.topology = "1x2";
  return pair;
}

// The same all-reduces across the same nodes with no link shaped: the pace
// at which the ranks' CPUs move bytes from node to node (TCP over veth and
// the bridge, on this machine's cores): at another bandwidth than the one
// fitted, every byte passes it besides the wire. Only over a shaped link.
std::optional<Measure> unshaped_path(const Measure& m, const Topology& topology) {
  if (topology.nodes < 2 || topology.inter.bandwidth_gbps <= 0) return std::nullopt;
  Topology unshaped = topology;
  unshaped.inter.bandwidth_gbps = 0;
  Measure path = m;
  path.sweep.topology = unshaped.name();
  return path;
}

// The ring across the shaped link: the wire paces it, steadily enough for
// one pass.
void fit_inter_link(const Measure& m, const std::string& backend, const Topology& topology,
                    model::Calibration* c, const std::string& dir) {
  const auto& plan = m.plan;
  std::cerr << "calibrating " << backend << " across the nodes of " << topology.name()
            << ": all-reduces at " << plan.inter_fit_sizes_mb << " MiB\n";
  c->inter_points = fit_points(m, backend, dir, plan.inter_fit_params, plan.inter_fit_sizes_mb);
  c->inter = model::InterLinkFit{model::fit_link_cost(c->inter_points), topology.name(),
                                 topology.inter.bandwidth_gbps};
}

// The link classes, each from its own measurements: inside a node from the
// same number of ranks on this machine's loopback alone (one node: the same
// CPU sharing as on the topology, no shaped link), and from two ranks there
// (pair_on_one_node); between nodes from the ranks spread over the emulated
// topology, whose ring waits for the shaped link at every step, and from the
// same ring unshaped (unshaped_path).
// The fits this machine's CPUs pace (all but the shaped ring) are measured
// in plan.cpu_paced_passes passes, spread over the calibration: their small
// buckets are where this machine's noise lands, and a state that lasts
// seconds then touches one pass, not a size's only measurement.
void fit_links(const Measure& m, const std::string& backend, const Topology& topology,
               model::Calibration* c, const std::string& dir) {
  const auto& plan = m.plan;
  const int passes = std::max(1, plan.cpu_paced_passes);
  std::vector<std::pair<std::string, FitRuns>> fits;
  fits.emplace_back("on " + std::to_string(m.sweep.nproc) + " ranks of one node",
                    FitRuns(on_one_node(m, topology), dir, plan.fit_params, plan.fit_sizes_mb));
  const auto pair = pair_on_one_node(m, topology);
  if (pair)
    fits.emplace_back("on 2 ranks of one node",
                      FitRuns(*pair, dir, plan.fit_params, plan.fit_sizes_mb));
  const auto path = unshaped_path(m, topology);
  if (path)
    fits.emplace_back("across the nodes of " + path->sweep.topology + ", unshaped",
                      FitRuns(*path, dir, plan.inter_fit_params, plan.inter_fit_sizes_mb));
  for (int pass = 1; pass <= passes; ++pass) {
    for (auto& [where, fit] : fits) {
      std::cerr << "calibrating " << backend << " " << where << ": all-reduces at "
                << fit.sizes_mb() << " MiB (pass " << pass << " of " << passes << ")\n";
      fit.measure_pass(backend);
    }
    if (pass == 1 && topology.nodes > 1) fit_inter_link(m, backend, topology, c, dir);
  }
  c->points = fits[0].second.observations();
  c->intra = model::fit_link_cost(c->points);
  if (pair) {
    c->intra_pair_points = fits[1].second.observations();
    c->intra_pair = model::fit_link_cost(c->intra_pair_points);
  }
  if (path) {
    c->inter_path_points = fits.back().second.observations();
    c->inter_path =
        model::InterLinkFit{model::fit_link_cost(c->inter_path_points), path->sweep.topology, 0};
  }
}

}  // namespace

model::Calibration measure_calibration(const SweepSpec& s, const std::string& backend,
                                       const Topology& topology, const WorkerProgram& program,
                                       const CalibrationPlan& plan) {
  TempDir dir;
  const Measure m{s, program, plan};
  model::Calibration c;
  c.backend = backend;
  c.host = rank_env::host_name();
  fit_links(m, backend, topology, &c, dir.path);
  std::cerr << "calibrating " << backend << ": compute steps\n";
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  // Open MPI 4.1 runs no progress thread: a non-blocking all-reduce moves
  // inside MPI calls, i.e. once the rank waits (docs/tuner.md, MPI).
  const bool mpi = backend == "mpi";
  c.comm_rate_during_compute = mpi ? kNoProgress : model::comm_rate_from_cores(s.nproc, int(cores));
  c.cores = int(cores);
  c.ranks = topology.nranks();
  auto one_node = topology;
  one_node.ranks_per_node = topology.nranks();
  one_node.nodes = 1;
  const auto delays = measure_step_delays(on_one_node(m, topology), backend, one_node, c, dir.path);
  c.step_delay_ms = delays.alone_ms;
  c.step_delay_under_comm_ms = delays.under_comm_ms;
  c.step_delay_step_us = kProbeStepUs;
  if (const auto pair = pair_on_one_node(m, topology)) {
    std::cerr << "calibrating " << backend << ": compute steps on 2 ranks of one node\n";
    c.pair_step_delays = measure_step_delays(*pair, backend, parse_topology("1x2"), c, dir.path);
  }
  c.comm_rate_source = "step delays: " + std::to_string(kProbeSteps) + " steps of " +
                       std::to_string(int(kProbeStepUs)) + " us, alone and beside an 8 MiB " +
                       "all-reduce" + (c.pair_step_delays ? ", on 2 ranks too" : "") +
                       "; comm rate: " +
                       (mpi ? std::string("none while computing (MPI progresses in MPI calls)")
                            : std::to_string(s.nproc) + " ranks sharing " + std::to_string(cores) +
                                  " cores with their compute");
  return c;
}

}  // namespace ddpscope::tuner
