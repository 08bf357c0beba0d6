// Deterministic samples for the statistics and decision tests of `ddpscope check`.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace ddpscope::testing {

// n samples around `scale` with lognormal noise of `sigma`, from `seed`.
inline std::vector<double> lognormal_samples(size_t n, double scale, double sigma, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> noise(0, sigma);
  std::vector<double> out;
  for (size_t i = 0; i < n; ++i) out.push_back(scale * std::exp(noise(rng)));
  return out;
}

}  // namespace ddpscope::testing
