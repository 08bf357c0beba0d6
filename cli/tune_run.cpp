// Roles: the coordinator (what the user runs) starts --nproc ranks of itself
// with `--worker` and reports; under an existing launcher (mpirun, srun,
// torchrun) every process is a rank and rank 0 reports.
#include "cli/tune_run.h"

#include <unistd.h>

#include <climits>
#include <filesystem>
#include <iostream>

#include "cli/commands.h"
#include "profiler/core/atomic_file.h"
#include "profiler/core/rank_env.h"
#include "profiler/store/reader.h"
#include "tuner/emulation/emulation_error.h"
#include "tuner/report/model_report.h"
#include "tuner/report/tune_json.h"
#include "tuner/report/tune_text.h"
#include "tuner/sweep_topology.h"
#include "tuner/tune_database.h"

namespace ddpscope::cli {
namespace {

using nlohmann::json;

tuner::SweepSpec sweep_of(const TuneArgs& a) {
  tuner::SweepSpec s;
  s.workload = a.workload;
  s.first_bucket_mb = a.first_bucket_mb;
  s.nproc = a.nproc;
  s.replay.iters = a.iters;
  s.replay.warmup = a.warmup;
  s.results_dir = a.results_dir;
  s.topology = a.topology;
  tuner::check_sweep(s);
  s.bucket_mb = tuner::parse_bucket_sizes(a.bucket_mb);
  s.backends = tuner::parse_backends(a.backends);
  return s;
}

// Each rank is this executable again, as `ddpscope tune --worker ...`.
tuner::WorkerProgram self_as_worker() {
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

void save(const TuneArgs& a, const tuner::SweepSpec& s, const tuner::Workload& w,
          const std::vector<tuner::SettingResult>& results, const json& j) {
  if (!a.json.empty()) write_json(a.json, j);
  if (a.db.empty()) return;
  const std::string command = "ddpscope tune --workload " + a.workload + " --backend " +
                              a.backends + " --bucket-mb " + a.bucket_mb +
                              (a.topology.empty() ? "" : " --topology " + a.topology);
  tuner::save_tune_run(a.db, s, w, results, j["recommendation"], command);
}

int report(const TuneArgs& a, const tuner::SweepSpec& s, const tuner::Workload& w,
           const std::vector<tuner::SettingResult>& results) {
  auto rec = tuner::recommend(results);
  tuner::report::print_workload(w, std::cout);
  std::cout << "\n";
  tuner::report::print_tune_table(results, std::cout);
  tuner::report::print_tune_recommendation(rec, std::cout);
  save(a, s, w, results, tuner::report::tune_json(s, w, results, rec));
  return 0;
}

int coordinate(const TuneArgs& a, const tuner::SweepSpec& s, const tuner::Workload& w) {
  std::vector<tuner::SettingResult> results;
  try {
    results = tuner::measure_sweep(s, self_as_worker());
  } catch (const InputError&) {
    throw;  // bad input (e.g. no root for --topology): exit 2, not a failed run
  } catch (const std::runtime_error& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
  return report(a, s, w, results);
}

int model_tune(const TuneArgs& a, const tuner::SweepSpec& s, const tuner::Workload& w) {
  const auto t = tuner::run_model_tune(s, a.model, w, self_as_worker());
  tuner::report::print_model_tune(w, t, std::cout);
  save(a, s, w, t.all, tuner::report::model_tune_json(s, w, t));
  return 0;
}

int run(const TuneArgs& a) {
  auto s = sweep_of(a);
  tuner::check_model_options(a.model);
  // Outputs before measuring: a sweep takes minutes, a typo should not.
  for (const auto* target : {&a.json, &a.model.nccl_tuner_config})
    if (!target->empty()) core::check_output_path(*target);
  if (!a.db.empty() && !std::filesystem::exists(a.db)) core::check_output_path(a.db);
  if (!a.db.empty() && std::filesystem::exists(a.db)) store::RunReader{a.db};  // appended to
  if (a.model.calibrate && !a.model.calibration.empty())
    core::check_output_path(a.model.calibration);
  const bool launched = !a.worker && rank_env::under_launcher();
  tuner::resolve_topology(s, a.nproc_given, a.dry_run, launched);
  const auto w = tuner::load_workload(a.workload);
  tuner::check_sweep_workload(s, w);
  if (a.dry_run) {
    write_json(a.json, tuner::report::plans_json(s, w));
    return 0;
  }
  const bool coordinator = !a.worker && !rank_env::under_launcher();
  if (coordinator && tuner::uses_model(s, a.model)) return model_tune(a, s, w);
  if (coordinator) return coordinate(a, s, w);
  auto rank = tuner::run_as_rank(s, w);  // one rank of a sweep (started by us, or a launcher)
  if (rank.status != 0 || !rank.rank0 || a.worker) return rank.status;
  return report(a, s, w, rank.results);
}

}  // namespace

int run_tune(const TuneArgs& a) { return run(a); }

}  // namespace ddpscope::cli
