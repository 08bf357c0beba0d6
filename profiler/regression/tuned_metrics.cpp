#include "profiler/regression/tuned_metrics.h"

#include <cstdio>
#include <iterator>
#include <map>

#include "profiler/core/stats.h"
#include "profiler/regression/statistics.h"
#include "profiler/store/tune_store.h"

namespace ddpscope::regression {
namespace {

std::string mb_text(double mb) {
  char buf[32];
  snprintf(buf, sizeof buf, "%g", mb);
  return buf;
}

// "gloo 1x2 bucket 25 MB": a setting as `ddpscope tune` prints it; the first
// bucket size only when it is not DDP's default 1 MB.
std::string setting_of(const store::TuneSample& s) {
  std::string text = s.backend + " " + s.topology + " bucket " + mb_text(s.bucket_mb) + " MB";
  if (s.first_bucket_mb != 1) text += " (first " + mb_text(s.first_bucket_mb) + " MB)";
  return text;
}

// A workload recorded from a run is named after its database's path, which
// differs between baseline and candidate for the same job: its bytes and
// parameter count identify it instead.
std::string workload_name(const std::string& name) {
  return name.rfind("recorded:", 0) == 0 ? "a recorded run" : name;
}

RunMetrics one_run(const std::string& path, const store::TuneRun& run,
                   const std::vector<store::TuneSample>& samples) {
  RunMetrics out;
  out.path = path;
  out.source = path + " (tune run " + std::to_string(run.id) + ")";
  out.kind = "tuner results";
  out.identity = {{"workload", workload_name(run.workload)},
                  {"workload bytes", std::to_string(run.workload_bytes)},
                  {"gradients", std::to_string(run.params)}};
  struct Family {
    const char* name;
    const char* what;
    double store::TuneSample::*field;
  } families[] = {{"iter", "iteration", &store::TuneSample::iter_ms},
                  {"comm", "communication", &store::TuneSample::comm_ms},
                  {"exposed", "exposed communication", &store::TuneSample::exposed_ms}};
  std::map<std::string, size_t> index;  // key -> position in out.metrics
  for (const auto& s : samples) {       // ordered by setting, then iteration
    std::string setting = setting_of(s);
    for (const auto& f : families) {
      std::string key = std::string(f.name) + " " + setting + " x" + std::to_string(s.nranks);
      auto [it, fresh] = index.try_emplace(key, out.metrics.size());
      if (fresh)
        out.metrics.push_back({f.name, key, setting + ": " + f.what, "ms", Better::lower, 0, {}});
      out.metrics[it->second].samples.push_back(s.*f.field);
    }
  }
  // Floors per setting, from its iteration time (the first metric of each).
  for (size_t i = 0; i < out.metrics.size(); i += std::size(families)) {
    double floor = per_iteration_floor(stats::median(out.metrics[i].samples));
    for (size_t j = i; j < i + std::size(families); ++j) out.metrics[j].floor = floor;
  }
  return out;
}

}  // namespace

std::vector<RunMetrics> tuned_metrics(store::RunReader& reader) {
  std::vector<RunMetrics> out;
  for (const auto& run : store::read_tune_runs(reader))
    out.push_back(one_run(reader.path(), run, store::read_tune_samples(reader, run.id)));
  return out;
}

}  // namespace ddpscope::regression
