#include "tuner/tune_database.h"

#include <ctime>

#include "profiler/core/clock.h"
#include "profiler/core/rank_env.h"
#include "profiler/store/tune_store.h"

namespace ddpscope::tuner {
namespace {}  // namespace

void save_tune_run(const std::string& db, const SweepSpec& s, const Workload& w,
                   const std::vector<SettingResult>& results, const nlohmann::json& recommendation,
                   const std::string& command_line) {
  store::TuneRun run;
  run.started = clock::iso_utc(clock::wall_ns());
  run.workload = w.name;
  run.workload_bytes = int64_t(w.total_bytes());
  run.params = int(w.params.size());
  run.host = rank_env::host_name();
  run.command_line = command_line;
  run.warmup = s.replay.warmup;
  run.iters = s.replay.iters;
  run.first_bucket_mb = s.first_bucket_mb;
  run.recommendation = recommendation.dump();
  store::write_tune_run(db, run, to_samples(results));
}

}  // namespace ddpscope::tuner
