#include "cli/tune_flow.h"

#include <sys/wait.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/commands.h"
#include "cli/launcher.h"
#include "cli/tune_model.h"
#include "cli/tune_output.h"
#include "cli/tune_topology.h"
#include "cli/tune_worker.h"
#include "tuner/bucket_plan.h"
#include "tuner/workload_from_run.h"

namespace fs = std::filesystem;

namespace ddpscope::cli {

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

std::vector<double> parse_sizes(const std::string& list) {
  std::vector<double> out;
  for (const auto& item : split_list(list)) {
    char* end = nullptr;
    double v = strtod(item.c_str(), &end);
    if (*end || !(v > 0)) throw UsageError("--bucket-mb: '" + item + "' is not a positive number");
    out.push_back(v);
  }
  if (out.empty()) throw UsageError("--bucket-mb: no sizes given");
  return out;
}

namespace {

std::vector<std::string> parse_backends(const std::string& list) {
  auto out = split_list(list);
  for (const auto& b : out)
    if (b != "gloo" && b != "mpi" && b != "nccl" && !is_model_backend(b))
      throw UsageError("--backend: unknown backend '" + b + "' (gloo, mpi, nccl, model)");
  if (out.empty()) throw UsageError("--backend: no backend given");
  return out;
}

tuner::Workload load(const std::string& spec) {
  try {
    if (spec.rfind("preset:", 0) == 0) return tuner::preset_workload(spec.substr(7));
    if (spec.size() > 3 && spec.substr(spec.size() - 3) == ".db")
      return tuner::workload_from_run(spec);
    return tuner::load_workload_json(spec);
  } catch (const tuner::WorkloadError& e) {
    throw UsageError(e.what());
  }
}

bool under_launcher() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS", "WORLD_SIZE"})
    if (const char* s = getenv(v); s && atoi(s) > 1) return true;
  return false;
}

std::string self_exe() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, size_t(n)) : "ddpscope";
}

// The worker command line: the same sweep, one backend, as one rank.
std::vector<std::string> worker_argv(const TuneArgs& a, const std::string& backend) {
  return {self_exe(),
          "tune",
          "--worker",
          "--backend",
          backend,
          "--workload",
          a.workload,
          "--bucket-mb",
          a.bucket_mb,
          "--first-bucket-mb",
          std::to_string(a.first_bucket_mb),
          "--iters",
          std::to_string(a.iters),
          "--warmup",
          std::to_string(a.warmup),
          "--results-dir",
          a.results_dir};
}

int launch_backend(const TuneArgs& a, const std::string& backend,
                   const TopologyEmulation* topology) {
  // A rank killed during an earlier rendezvous leaves its files behind.
  fs::remove_all(a.results_dir + "/rendezvous-" + backend);
  LaunchSpec spec;
  spec.argv = worker_argv(a, backend);
  if (backend == "mpi") {
    // The tuner replays ring all-reduces: force the ring for both the blocking
    // (coll/tuned) and the non-blocking (coll/libnbc) paths, as docs/tuner.md says.
    std::vector<std::string> mpi{"mpirun",
                                 "-np",
                                 std::to_string(a.nproc),
                                 "--oversubscribe",
                                 "--mca",
                                 "coll_libnbc_iallreduce_algorithm",
                                 "1",
                                 "--mca",
                                 "coll_tuned_use_dynamic_rules",
                                 "1",
                                 "--mca",
                                 "coll_tuned_allreduce_algorithm",
                                 "4"};
    if (geteuid() == 0) mpi.push_back("--allow-run-as-root");
    spec.argv.insert(spec.argv.begin(), mpi.begin(), mpi.end());
  } else {
    spec.nproc = a.nproc;
  }
  if (topology) topology->place_ranks(spec);
  return launch_and_wait(spec);
}

WorkerPlan worker_plan(const TuneArgs& a, const tuner::Workload& w, const std::string& backend) {
  WorkerPlan p;
  p.workload = w;
  p.backend = backend;
  p.bucket_mb = parse_sizes(a.bucket_mb);
  p.first_bucket_mb = a.first_bucket_mb;
  p.replay.iters = a.iters;
  p.replay.warmup = a.warmup;
  p.results_dir = a.results_dir;
  return p;
}

int coordinate(TuneArgs& a, const tuner::Workload& w) {
  std::vector<tuner::SettingResult> results;
  try {
    results = measure_sweep(a);
  } catch (const UsageError&) {
    throw;  // bad input (e.g. no root for --topology): exit 2, not a failed run
  } catch (const std::runtime_error& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
  return report_tune(a, w, results);
}

}  // namespace

std::vector<tuner::SettingResult> measure_sweep(TuneArgs a) {
  std::vector<std::string> measured;
  for (const auto& backend : parse_backends(a.backends))
    if (!is_model_backend(backend)) measured.push_back(backend);  // the model is predicted
  if (measured.empty()) return {};
  auto topology = TopologyEmulation::open(a);  // nullptr without --topology
  bool own_dir = a.results_dir.empty();
  if (own_dir) {
    char tmpl[] = "/tmp/ddpscope-tune-XXXXXX";
    if (!mkdtemp(tmpl)) throw std::runtime_error("cannot create a results directory in /tmp");
    a.results_dir = tmpl;
  }
  std::vector<tuner::SettingResult> results;
  for (const auto& backend : measured) {
    int status = launch_backend(a, backend, topology.get());
    std::string summary = a.results_dir + "/" + backend + "-summary.json";
    if (status != 0 || !fs::exists(summary))
      throw std::runtime_error("ddpscope: tune: the " + backend + " ranks failed (status " +
                               std::to_string(status) + "); see their messages above");
    auto part = read_summary(summary);
    if (topology) topology->label(part);
    results.insert(results.end(), part.begin(), part.end());
  }
  if (own_dir) fs::remove_all(a.results_dir);
  return results;
}

int run_tune(TuneArgs& a) {
  if (a.nproc < 1) throw UsageError("--nproc must be at least 1");
  if (a.iters < 1 || a.warmup < 0) throw UsageError("--iters must be >= 1 and --warmup >= 0");
  if (!(a.first_bucket_mb > 0)) throw UsageError("--first-bucket-mb must be positive");
  auto sizes = parse_sizes(a.bucket_mb);
  auto backends = parse_backends(a.backends);
  resolve_topology(a, backends, !a.worker && under_launcher());
  tuner::Workload w = load(a.workload);
  if (a.dry_run) return write_plans(a, w, sizes);
  if (!a.worker && !under_launcher() && uses_model(a)) return run_model_tune(a, w);
  if (!a.worker && !under_launcher()) return coordinate(a, w);
  // One rank of a sweep (started by us, or by the user's launcher).
  if (a.results_dir.empty()) a.results_dir = "ddpscope-tune-results";
  fs::create_directories(a.results_dir);
  std::vector<tuner::SettingResult> results;
  for (const auto& backend : backends) {
    if (is_model_backend(backend)) continue;
    std::vector<tuner::SettingResult> part;
    int rank = 0;
    if (int rc = run_tune_worker(worker_plan(a, w, backend), &part, &rank); rc != 0) return rc;
    results.insert(results.end(), part.begin(), part.end());
    if (rank != 0) return 0;
  }
  return a.worker ? 0 : report_tune(a, w, results);
}

}  // namespace ddpscope::cli
