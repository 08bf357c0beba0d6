// The statistics behind `ddpscope check` (docs/ci.md explains the method and
// why): medians (profiler/core/stats.h), and a hierarchical bootstrap of the ratio of two sides'
// centres that resamples runs, then iterations within runs in moving blocks.
// Pure functions over samples, seeded, so the same databases always give the
// same verdict.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace ddpscope::regression {

struct Interval {
  double lo = 0, hi = 0;
};

// The samples of one metric on one side of a comparison: one vector per run
// (a recorded run, or one `ddpscope tune` invocation), in measurement order.
using RunSamples = std::vector<std::vector<double>>;

// A side's centre: the geometric mean of its runs' medians. Medians below
// `floor` count as `floor`, so a zero (e.g. no exposed time) stays comparable.
double centre(const RunSamples& runs, double floor);

struct BootstrapSpec {
  int resamples = 10000;
  double level = 0.95;  // two-sided coverage of the interval
  uint64_t seed = 1;
  double floor = 0;
};

// How far a run's median moves between runs of the same job: each repeated
// run's log median minus its side's mean, from every side with two runs or
// more, scaled by sqrt(k / (k - 1)) so that their spread estimates a new run's
// rather than one pulled towards its own side's mean. Empty without repeats.
std::vector<double> run_shifts(const RunSamples& baseline, const RunSamples& candidate,
                               double floor);

// The run-to-run spread: the standard deviation of run_shifts() (~ the relative
// spread of a run's median); nullopt without repeated runs.
std::optional<double> run_noise(const RunSamples& baseline, const RunSamples& candidate,
                                double floor);

// Percentile interval of centre(candidate) / centre(baseline). Each resample
// draws a side's runs with replacement, then each drawn run's samples in
// moving blocks (iterations next to each other share the machine's load, so
// single-sample draws would understate the spread). A side with a single run
// cannot show how much runs move, so each resample shifts it by a run shift
// drawn from the repeated runs, when there are any. Runs longer than 250
// samples are thinned to 250 evenly spaced ones first (bounded cost).
Interval bootstrap_ratio(const RunSamples& baseline, const RunSamples& candidate,
                         const BootstrapSpec& spec);

}  // namespace ddpscope::regression
