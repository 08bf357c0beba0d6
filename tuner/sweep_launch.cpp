#include "tuner/sweep_launch.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>

#include "profiler/core/rank_launcher.h"
#include "tuner/rank_protocol.h"
#include "tuner/sweep_topology.h"

namespace fs = std::filesystem;

namespace ddpscope::tuner {
namespace {

// Sizes as the shortest text that reads back as the same double.
std::string size_list(const std::vector<double>& mb) {
  std::string out;
  for (double v : mb) {
    char buf[32];
    snprintf(buf, sizeof buf, "%.17g", v);
    for (int digits = 1; digits < 17; ++digits) {
      char shorter[32];
      snprintf(shorter, sizeof shorter, "%.*g", digits, v);
      if (strtod(shorter, nullptr) == v) {
        snprintf(buf, sizeof buf, "%s", shorter);
        break;
      }
    }
    out += (out.empty() ? "" : ",") + std::string(buf);
  }
  return out;
}

// The tuner replays ring all-reduces: force the ring for both the blocking
// (coll/tuned) and the non-blocking (coll/libnbc) paths, as docs/tuner.md says.
std::vector<std::string> mpirun_prefix(int nproc) {
  std::vector<std::string> mpi{"mpirun",
                               "-np",
                               std::to_string(nproc),
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
  return mpi;
}

int launch_backend(const SweepSpec& s, const WorkerProgram& program, const std::string& backend,
                   const TopologyEmulation* topology) {
  // A rank killed during an earlier rendezvous leaves its files behind.
  fs::remove_all(s.results_dir + "/rendezvous-" + backend);
  core::LaunchSpec spec;
  spec.argv = program.argv;
  for (auto& arg : worker_arguments(s, backend)) spec.argv.push_back(arg);
  if (backend == "mpi") {
    auto mpi = mpirun_prefix(s.nproc);
    spec.argv.insert(spec.argv.begin(), mpi.begin(), mpi.end());
  } else {
    spec.nproc = s.nproc;
  }
  if (topology) topology->place_ranks(spec);
  return core::launch_and_wait(spec);
}

WorkerPlan worker_plan(const SweepSpec& s, const Workload& w, const std::string& backend) {
  WorkerPlan p;
  p.workload = w;
  p.backend = backend;
  p.bucket_mb = s.bucket_mb;
  p.first_bucket_mb = s.first_bucket_mb;
  p.replay = s.replay;
  p.results_dir = s.results_dir;
  return p;
}

}  // namespace

std::vector<std::string> worker_arguments(const SweepSpec& s, const std::string& backend) {
  return {"--backend",         backend,
          "--workload",        s.workload,
          "--bucket-mb",       size_list(s.bucket_mb),
          "--first-bucket-mb", size_list({s.first_bucket_mb}),
          "--iters",           std::to_string(s.replay.iters),
          "--warmup",          std::to_string(s.replay.warmup),
          "--results-dir",     s.results_dir};
}

SweepSpec parse_worker_arguments(const std::vector<std::string>& args) {
  std::map<std::string, std::string> v;
  for (size_t i = 0; i + 1 < args.size(); i += 2) v[args[i]] = args[i + 1];
  if (args.size() % 2 || v.size() != 7 || !v.count("--backend") || !v.count("--results-dir"))
    throw InputError("worker arguments: expected the 7 flags of worker_arguments");
  SweepSpec s;
  s.backends = parse_backends(v["--backend"]);
  s.workload = v["--workload"];
  s.bucket_mb = parse_bucket_sizes(v["--bucket-mb"]);
  s.first_bucket_mb = parse_bucket_cap("--first-bucket-mb", v["--first-bucket-mb"]);
  s.replay.iters = parse_count("--iters", v["--iters"]);
  s.replay.warmup = parse_count("--warmup", v["--warmup"]);
  s.results_dir = v["--results-dir"];
  check_sweep(s);
  return s;
}

std::vector<SettingResult> measure_sweep(SweepSpec s, const WorkerProgram& program) {
  const auto measured = measured_backends(s);  // the model is predicted
  if (measured.empty()) return {};
  auto topology = TopologyEmulation::open(s);  // nullptr without a topology
  // Our own results directory goes however the sweep ends.
  struct OwnDir {
    std::string path;
    ~OwnDir() {
      std::error_code ec;
      if (!path.empty()) fs::remove_all(path, ec);
    }
  } own;
  if (s.results_dir.empty()) {
    char tmpl[] = "/tmp/ddpscope-tune-XXXXXX";
    if (!mkdtemp(tmpl)) throw std::runtime_error("cannot create a results directory in /tmp");
    s.results_dir = own.path = tmpl;
  }
  std::vector<SettingResult> results;
  for (const auto& backend : measured) {
    int status = launch_backend(s, program, backend, topology.get());
    std::string summary = s.results_dir + "/" + backend + "-summary.json";
    if (status != 0 || !fs::exists(summary))
      throw std::runtime_error("ddpscope: tune: the " + backend + " ranks failed (status " +
                               std::to_string(status) + "); see their messages above");
    auto part = read_summary(summary);
    if (topology) topology->label(part);
    results.insert(results.end(), part.begin(), part.end());
  }
  return results;
}

RankOutcome run_as_rank(SweepSpec s, const Workload& w) {
  if (s.results_dir.empty()) s.results_dir = "ddpscope-tune-results";
  fs::create_directories(s.results_dir);
  RankOutcome out;
  for (const auto& backend : measured_backends(s)) {
    std::vector<SettingResult> part;
    int rank = 0;
    out.status = run_rank(worker_plan(s, w, backend), &part, &rank);
    if (out.status != 0) return out;
    out.results.insert(out.results.end(), part.begin(), part.end());
    out.rank0 = rank == 0;
    if (!out.rank0) return out;
  }
  return out;
}

}  // namespace ddpscope::tuner
