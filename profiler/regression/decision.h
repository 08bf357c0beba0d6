// The verdict of `ddpscope check`, metric by metric: is the candidate slower
// than the baseline by more than the tolerance, with confidence, given the
// noise within runs and (when runs are repeated) between runs? The method is
// written down in docs/ci.md.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "profiler/regression/metrics.h"
#include "profiler/regression/statistics.h"

namespace ddpscope::regression {

struct CheckOptions {
  double tolerance = 0.05;            // the smallest change that counts, as a fraction
  double confidence = 0.95;           // for the whole check: shared out over metrics (Bonferroni)
  size_t min_samples = 5;             // a run with fewer samples of a metric does not count
  std::vector<std::string> families;  // metric families to check; empty: all
};

enum class Status {
  regression,
  improved,
  unchanged,
  too_few_samples,
  baseline_only,
  candidate_only
};
const char* name_of(Status s);

struct Verdict {
  std::string kind;  // "recorded run" or "tuner results"
  std::string family, key, label, unit;
  Better better = Better::lower;
  Status status = Status::unchanged;
  double baseline = 0, candidate = 0;  // each side's centre (geometric mean of run medians)
  double change = 0;                   // candidate / baseline - 1
  Interval ratio;                      // interval of candidate / baseline at CheckResult::level
  std::optional<double> run_noise;     // run-to-run spread of a run's median (sd of its log)
  int baseline_runs = 0, candidate_runs = 0;
  size_t baseline_samples = 0, candidate_samples = 0;
};

struct FactChange {
  std::string kind, name, baseline, candidate;
};

struct CheckResult {
  std::vector<std::string> baseline_sources, candidate_sources;
  CheckOptions options;
  double level = 0;  // per-metric coverage of the intervals, after Bonferroni
  int decided = 0;   // metrics with enough samples on both sides
  std::vector<Verdict> verdicts;
  std::vector<FactChange> changed_facts;
  std::vector<std::string> notes;  // what was not compared, and why

  int count(Status s) const;
  bool regressed() const { return count(Status::regression) > 0; }
  bool run_noise_measured() const;
};

// Throws InputError for databases that are not alike, or share no metric.
CheckResult check(const std::vector<RunMetrics>& baseline, const std::vector<RunMetrics>& candidate,
                  const CheckOptions& options);

}  // namespace ddpscope::regression
