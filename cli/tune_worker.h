// One rank of a tune sweep: replay every setting for one backend, write this
// rank's samples, and on rank 0 combine every rank's into a summary file.
#pragma once

#include <string>
#include <vector>

#include "tuner/sweep.h"
#include "tuner/workload.h"

namespace ddpscope::cli {

struct WorkerPlan {
  tuner::Workload workload;
  std::string backend;
  std::vector<double> bucket_mb;
  double first_bucket_mb = 1;
  tuner::ReplayOptions replay;
  std::string results_dir;
};

// Returns the process exit status. On rank 0, `summary` receives the results.
int run_tune_worker(const WorkerPlan& plan, std::vector<tuner::SettingResult>* summary,
                    int* rank_out);

// Summary files: what rank 0 writes and the coordinator reads.
void write_summary(const std::string& path, const std::vector<tuner::SettingResult>& results);
std::vector<tuner::SettingResult> read_summary(const std::string& path);

}  // namespace ddpscope::cli
