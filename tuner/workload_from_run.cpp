#include "tuner/workload_from_run.h"

#include <algorithm>

#include "profiler/analysis/analyze.h"
#include "profiler/store/reader.h"

namespace ddpscope::tuner {

Workload workload_from_run(const std::string& path) {
  store::RunReader reader(path);
  auto run = analysis::analyze_run(reader);
  if (run.buckets.empty() || run.iterations.median_ms <= 0)
    throw WorkloadError(path + ": no DDP iterations detected, nothing to replay");
  Workload w;
  w.name = "recorded:" + path;
  // Bucket 0 is reduced first: its gradients became ready first. Params are
  // listed in model order (reverse of readiness), ready_order says the rest.
  double backward_us = 0;
  for (const auto& b : run.buckets) {
    Param p;
    p.name = "bucket " + std::to_string(b.index);
    p.dtype = Dtype::float32;
    p.numel = std::max<uint64_t>(1, b.bytes / 4);
    p.backward_us = b.index == 0 ? 0 : b.launch_gap_us;
    backward_us += p.backward_us;
    w.params.insert(w.params.begin(), p);
  }
  size_t n = w.params.size();
  for (size_t i = 0; i < n; ++i) w.ready_order.push_back(n - 1 - i);
  // What is left of the iteration is forward, the first bucket's backward and
  // the optimizer; it is not visible apart, so it all runs before backward.
  double rest_us =
      run.iterations.median_ms * 1e3 - backward_us - run.iterations.exposed_median_ms * 1e3;
  w.forward_us = std::max(0.0, rest_us);
  w.optimizer_us = 0;
  return w;
}

}  // namespace ddpscope::tuner
