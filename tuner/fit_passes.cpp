#include "tuner/fit_passes.h"

#include <algorithm>
#include <stdexcept>

#include "profiler/core/stats.h"

namespace ddpscope::tuner {

PooledComm pool_passes(const std::vector<const SettingResult*>& passes) {
  std::vector<double> comm_ms, pass_ms;
  for (const auto* pass : passes) {
    for (const auto& it : pass->iterations) comm_ms.push_back(it.comm_ms);
    pass_ms.push_back(pass->comm_ms_median);
  }
  if (comm_ms.empty()) throw std::invalid_argument("a calibration fit measured no iterations");
  PooledComm p;
  p.fastest_pass_ms = *std::min_element(pass_ms.begin(), pass_ms.end());
  p.slowest_pass_ms = *std::max_element(pass_ms.begin(), pass_ms.end());
  p.states_differ = p.slowest_pass_ms > kFitStateRatio * p.fastest_pass_ms;
  p.ms = p.states_differ ? p.slowest_pass_ms : stats::median(comm_ms);
  return p;
}

}  // namespace ddpscope::tuner
