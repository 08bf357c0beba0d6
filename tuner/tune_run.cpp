// Roles: the coordinator (what the user runs) starts --nproc ranks of itself
// with `--worker` and reports; under an existing launcher (mpirun, srun,
// torchrun) every process is a rank and rank 0 reports.
#include "tuner/tune_run.h"

#include <unistd.h>

#include <climits>
#include <filesystem>
#include <iostream>

#include "profiler/core/atomic_file.h"
#include "profiler/core/input_error.h"
#include "profiler/core/rank_env.h"
#include "profiler/store/reader.h"
#include "tuner/emulation/emulation_error.h"
#include "tuner/report/model_report.h"
#include "tuner/report/tune_json.h"
#include "tuner/report/tune_text.h"
#include "tuner/sweep_topology.h"
#include "tuner/tune_database.h"

namespace ddpscope::tuner {
namespace {

using nlohmann::json;

SweepSpec sweep_of(const TuneOptions& a) {
  SweepSpec s;
  s.workload = a.workload;
  s.first_bucket_mb = a.first_bucket_mb;
  s.nproc = a.nproc;
  s.replay.iters = a.iters;
  s.replay.warmup = a.warmup;
  s.results_dir = a.results_dir;
  s.topology = a.topology;
  check_sweep(s);
  s.bucket_mb = parse_bucket_sizes(a.bucket_mb);
  s.backends = parse_backends(a.backends);
  return s;
}

// Each rank is this executable again, as `ddpscope tune --worker ...`.
WorkerProgram self_as_worker() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return {{n > 0 ? std::string(buf, size_t(n)) : "ddpscope", "tune", "--worker"}};
}

void write_json(const std::string& path, const json& j) {
  if (path.empty())
    std::cout << j.dump(1) << "\n";
  else
    core::write_atomically(path, [&](std::ostream& out) { out << j.dump(1) << "\n"; });
}

void save(const TuneOptions& a, const SweepSpec& s, const Workload& w,
          const std::vector<SettingResult>& results, const json& j) {
  if (!a.json.empty()) write_json(a.json, j);
  if (a.db.empty()) return;
  const std::string command = "ddpscope tune --workload " + a.workload + " --backend " +
                              a.backends + " --bucket-mb " + a.bucket_mb +
                              (a.topology.empty() ? "" : " --topology " + a.topology);
  save_tune_run(a.db, s, w, results, j["recommendation"], command);
}

int print_and_save(const TuneOptions& a, const SweepSpec& s, const Workload& w,
                   const std::vector<SettingResult>& results) {
  auto rec = recommend(results);
  report::print_workload(w, std::cout);
  std::cout << "\n";
  report::print_tune_table(results, std::cout);
  report::print_tune_recommendation(rec, std::cout);
  save(a, s, w, results, report::tune_json(s, w, results, rec));
  return 0;
}

int coordinate(const TuneOptions& a, const SweepSpec& s, const Workload& w) {
  std::vector<SettingResult> results;
  try {
    results = measure_sweep(s, self_as_worker());
  } catch (const InputError&) {
    throw;  // bad input (e.g. no root for --topology): exit 2, not a failed run
  } catch (const std::runtime_error& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
  return print_and_save(a, s, w, results);
}

int model_tune(const TuneOptions& a, const SweepSpec& s, const Workload& w) {
  const auto t = run_model_tune(s, a.model, w, self_as_worker());
  report::print_model_tune(w, t, std::cout);
  save(a, s, w, t.all, report::model_tune_json(s, w, t));
  return 0;
}

}  // namespace

int run_tune(const TuneOptions& a) {
  auto s = sweep_of(a);
  check_model_options(a.model);
  // Outputs before measuring: a sweep takes minutes, a typo should not.
  for (const auto* target : {&a.json, &a.model.nccl_tuner_config})
    if (!target->empty()) core::check_output_path(*target);
  if (!a.db.empty() && !std::filesystem::exists(a.db)) core::check_output_path(a.db);
  if (!a.db.empty() && std::filesystem::exists(a.db)) store::RunReader{a.db};  // appended to
  if (a.model.calibrate && !a.model.calibration.empty())
    core::check_output_path(a.model.calibration);
  const bool launched = !a.worker && rank_env::under_launcher();
  resolve_topology(s, a.nproc_given, a.dry_run, launched);
  const auto w = load_workload(a.workload);
  check_sweep_workload(s, w);
  if (a.dry_run) {
    write_json(a.json, report::plans_json(s, w));
    return 0;
  }
  const bool coordinator = !a.worker && !rank_env::under_launcher();
  if (coordinator && uses_model(s, a.model)) return model_tune(a, s, w);
  if (coordinator) return coordinate(a, s, w);
  auto rank = run_as_rank(s, w);  // one rank of a sweep (started by us, or a launcher)
  if (rank.status != 0 || !rank.rank0 || a.worker) return rank.status;
  return print_and_save(a, s, w, rank.results);
}

}  // namespace ddpscope::tuner
