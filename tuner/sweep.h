// A sweep: the settings to measure (backend x bucket size), what every rank
// measured for each, and the recommendation that follows.
#pragma once

#include <string>
#include <vector>

#include "profiler/store/tune_store.h"
#include "tuner/replay.h"

namespace ddpscope::tuner {

struct Setting {
  std::string backend;
  double bucket_mb = 25;
  double first_bucket_mb = 1;
};

// One setting's figures over ranks and iterations. A rank runs its
// iterations back to back, so its iteration time is its period (start to
// next start) and they add up to the job's wall time; the job's iteration
// is the mean over ranks. Not the maximum: the all-reduces keep the ranks in
// step, so a rank that starts early in one iteration waits longer in it, and
// the maximum adds each iteration's largest jitter to a throughput no rank
// saw (6 % at 2 Gbit/s on an emulated 2x2). The comm span and the exposed
// time stay the worst rank's: how long any rank's all-reduces took, and the
// longest any rank waited for them.
struct SettingResult {
  Setting setting;
  std::string topology;  // "1x<N>": one node of N ranks (emulated topologies: issue #6)
  int nranks = 0;
  int buckets = 0;
  std::vector<IterationSample> iterations;  // per iteration: iter mean, comm and exposed max
  double iter_ms_median = 0, iter_ms_p25 = 0, iter_ms_p75 = 0;
  double comm_ms_median = 0, exposed_ms_median = 0;
};

// Reduces per-rank samples (rank -> iterations) of one setting.
SettingResult summarize_setting(const Setting& s, int buckets,
                                const std::vector<std::vector<IterationSample>>& per_rank);

struct TuneRecommendation {
  Setting best;     // the recommendation: the fastest, or DDP's default within noise of it
  Setting fastest;  // the lowest median measured
  double fastest_iter_ms_median = 0;
  // Fastest vs DDP's default (same backend), by the bootstrap `check` uses:
  // the interval of median(fastest) / median(default) at `level`. The fastest
  // is recommended only when the whole interval lies below 1.
  bool compared = false;
  bool within_noise = false;  // the default is within noise of the fastest: keep it
  double level = 0.95;
  double ratio_lo = 0, ratio_hi = 0;
  double iter_ms_median = 0, iter_ms_p25 = 0, iter_ms_p75 = 0;
  bool have_default = false;  // DDP's default, 25 MB, was measured
  double default_iter_ms_median = 0;
  double gain_pct = 0;        // over the default, same backend
  std::string ddp_arguments;  // ready to paste
  std::vector<std::string> environment;
};

TuneRecommendation recommend(const std::vector<SettingResult>& results);

std::vector<store::TuneSample> to_samples(const std::vector<SettingResult>& results);

}  // namespace ddpscope::tuner
