#include "profiler/regression/metrics.h"

#include <algorithm>

#include "profiler/regression/recorded_metrics.h"
#include "profiler/regression/tuned_metrics.h"
#include "profiler/store/reader.h"

namespace ddpscope::regression {

double per_iteration_floor(double iteration_median_ms) {
  return std::max(0.01 * iteration_median_ms, 1e-3);
}

const std::vector<std::string>& metric_families() {
  static const std::vector<std::string> families = {"comm",  "exposed", "bucket",
                                                    "busbw", "fsdp",    "iter"};
  return families;
}

std::vector<RunMetrics> load_run_metrics(const std::string& path) {
  auto reader = store::open_run(path);  // a database, or a run's rank files
  std::vector<RunMetrics> out;
  if (reader->count("collectives") > 0) out.push_back(recorded_metrics(*reader));
  // Tuner results live in a database of their own, never among rank files.
  if (!reader->several_files())
    for (auto& run : tuned_metrics(*reader)) out.push_back(std::move(run));
  if (out.empty())
    throw InputError(path +
                     ": holds neither a recorded run nor tuner results (nothing to compare)");
  return out;
}

}  // namespace ddpscope::regression
