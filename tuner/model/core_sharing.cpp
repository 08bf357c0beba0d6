#include "tuner/model/core_sharing.h"

#include <algorithm>

namespace ddpscope::tuner::model {
namespace {

// How much later than its compute a busy-wait ends, per unit of its length:
// 1/s - 1 for `ranks` compute threads alone, and what the backend threads
// beside them add (1/s' - 1/s).
double late_alone(int ranks, double cores) { return 1 / core_share(ranks, cores) - 1; }
double late_beside_comm(int ranks, double cores) {
  return 1 / core_share(2.0 * ranks, cores) - 1 / core_share(ranks, cores);
}

// to / from, or 1 where the calibration measured nothing to scale (its
// ranks had the cores to themselves: what it measured was other work).
double ratio(double to, double from) { return from > 0 ? to / from : 1; }

}  // namespace

double core_share(double threads, double cores) {
  return threads > 0 && cores > 0 ? std::min(1.0, cores / threads) : 1.0;
}

double comm_rate_from_cores(int ranks, double cores) {
  const double c = cores > 0 ? cores : 1.0, p = std::max(1, ranks);
  return core_share(2 * p, c) / core_share(p, c);
}

RankScaling scale_ranks(int from, int to, double cores) {
  RankScaling s;
  if (from <= 0 || to <= 0 || cores <= 0 || from == to) return s;
  s.link = core_share(from, cores) / core_share(to, cores);
  s.step_delay = ratio(late_alone(to, cores), late_alone(from, cores));
  s.step_delay_under_comm = ratio(late_beside_comm(to, cores), late_beside_comm(from, cores));
  return s;
}

double effective_cores(int ranks, int cores, double step_delay_ms, double step_us) {
  if (ranks <= 0 || cores <= 0 || !(step_us > 0)) return cores;
  const double step_ms = step_us / 1000;
  return std::min(double(cores), ranks * step_ms / (step_ms + std::max(0.0, step_delay_ms)));
}

}  // namespace ddpscope::tuner::model
