#include "profiler/regression/statistics.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "profiler/core/stats.h"

namespace ddpscope::regression {
namespace {

// One moving-block resample of a run's samples, same length: blocks of about
// n^(1/3) consecutive samples (the usual order for a block bootstrap).
void block_resample(const std::vector<double>& run, std::mt19937_64& rng,
                    std::vector<double>& out) {
  size_t n = run.size();
  size_t block = std::max<size_t>(1, size_t(std::lround(std::cbrt(double(n)))));
  std::uniform_int_distribution<size_t> start(0, n - block);
  out.clear();
  while (out.size() < n) {
    size_t s = start(rng);
    for (size_t i = s; i < s + block && out.size() < n; ++i) out.push_back(run[i]);
  }
}

// Long runs (a million collectives) would make every resample slow: runs are
// thinned to evenly spaced samples, order kept. A median from fewer samples
// only varies more, so the interval can only widen.
constexpr size_t kMaxBootstrapSamples = 250;

RunSamples thinned(const RunSamples& runs) {
  RunSamples out;
  for (const auto& run : runs) {
    if (run.size() <= kMaxBootstrapSamples) {
      out.push_back(run);
      continue;
    }
    std::vector<double> every;
    double step = double(run.size()) / double(kMaxBootstrapSamples);
    for (size_t i = 0; i < kMaxBootstrapSamples; ++i)
      every.push_back(run[size_t(double(i) * step)]);
    out.push_back(std::move(every));
  }
  return out;
}

double resampled_centre(const RunSamples& runs, const std::vector<double>& shifts, double floor,
                        std::mt19937_64& rng, std::vector<double>& scratch) {
  std::uniform_int_distribution<size_t> pick(0, runs.size() - 1);
  double sum_log = 0;
  for (size_t k = 0; k < runs.size(); ++k) {
    block_resample(runs[runs.size() == 1 ? 0 : pick(rng)], rng, scratch);
    // In place: scratch is refilled by the next draw, so no copy per resample.
    sum_log += std::log(std::max(stats::quantile_in_place(std::span<double>(scratch), 0.5), floor));
  }
  double log_centre = sum_log / double(runs.size());
  if (runs.size() == 1 && !shifts.empty())
    log_centre += shifts[std::uniform_int_distribution<size_t>(0, shifts.size() - 1)(rng)];
  return std::exp(log_centre);
}

void add_shifts(const RunSamples& runs, double floor, std::vector<double>& out) {
  if (runs.size() < 2) return;
  std::vector<double> logs;
  for (const auto& r : runs) logs.push_back(std::log(std::max(stats::median(r), floor)));
  double mean = 0;
  for (double x : logs) mean += x / double(logs.size());
  double k = double(logs.size());
  for (double x : logs) out.push_back((x - mean) * std::sqrt(k / (k - 1)));
}

}  // namespace

double centre(const RunSamples& runs, double floor) {
  double sum_log = 0;
  for (const auto& run : runs) sum_log += std::log(std::max(stats::median(run), floor));
  return std::exp(sum_log / double(runs.size()));
}

std::vector<double> run_shifts(const RunSamples& baseline, const RunSamples& candidate,
                               double floor) {
  std::vector<double> out;
  add_shifts(baseline, floor, out);
  add_shifts(candidate, floor, out);
  return out;
}

std::optional<double> run_noise(const RunSamples& baseline, const RunSamples& candidate,
                                double floor) {
  auto shifts = run_shifts(baseline, candidate, floor);
  if (shifts.empty()) return std::nullopt;
  double ss = 0;
  for (double s : shifts) ss += s * s;  // shifts are deviations from their side's mean
  return std::sqrt(ss / double(shifts.size()));
}

Interval bootstrap_ratio(const RunSamples& baseline, const RunSamples& candidate,
                         const BootstrapSpec& spec) {
  auto shifts = run_shifts(baseline, candidate, spec.floor);
  auto base_runs = thinned(baseline), cand_runs = thinned(candidate);
  std::mt19937_64 rng(spec.seed);
  std::vector<double> ratios, scratch;
  ratios.reserve(size_t(spec.resamples));
  for (int b = 0; b < spec.resamples; ++b) {
    double base = resampled_centre(base_runs, shifts, spec.floor, rng, scratch);
    ratios.push_back(resampled_centre(cand_runs, shifts, spec.floor, rng, scratch) / base);
  }
  std::sort(ratios.begin(), ratios.end());
  double tail = (1 - spec.level) / 2;
  return {stats::quantile_sorted(ratios, tail), stats::quantile_sorted(ratios, 1 - tail)};
}

}  // namespace ddpscope::regression
