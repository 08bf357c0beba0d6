// One rank of a tune sweep and how the ranks hand their samples on: every
// rank replays every setting of one backend and writes its samples to
// `<results_dir>/<backend>-rank<R>.json`; after a barrier rank 0 reads them
// all (polling, for slow shared filesystems), combines each iteration over
// the ranks (sweep.h's SettingResult: the mean iteration time, the worst
// rank's communication) and writes `<backend>-summary.json`, which the
// coordinator that started the ranks reads.
#pragma once

#include <string>
#include <vector>

#include "tuner/sweep.h"
#include "tuner/workload.h"

namespace ddpscope::tuner {

struct WorkerPlan {
  Workload workload;
  std::string backend;
  std::vector<double> bucket_mb;
  double first_bucket_mb = 1;
  ReplayOptions replay;
  std::string results_dir;
};

// Runs this process as one rank (rank and world size from the launcher's
// variables, profiler/core/rank_env.h). Returns the process exit status; on
// rank 0, `summary` receives the combined results.
int run_rank(const WorkerPlan& plan, std::vector<SettingResult>* summary, int* rank_out);

// Summary files: what rank 0 writes and the coordinator reads.
void write_summary(const std::string& path, const std::vector<SettingResult>& results);
std::vector<SettingResult> read_summary(const std::string& path);

}  // namespace ddpscope::tuner
