#include "profiler/analysis/live_watch.h"

#include <algorithm>
#include <climits>

#include "profiler/analysis/analyze.h"
#include "profiler/core/stats.h"
#include "profiler/store/run_filter.h"

namespace ddpscope::analysis {

// A step counts once it is complete (the next one began, or the job ended)
// and its start is past the last one counted. The first step of a rank in the window may have
// lost its first buckets to the window's edge, so it counts only while the
// window still holds the job's beginning: with a window longer than two steps
// and a refresh, every step is seen whole, not first, at some refresh.
void LiveWatch::count_steps(int64_t run_start_ns, bool ended) {
  std::map<int, bool> first_seen;
  for (const auto& it : figures_.window.iteration_list) {
    if (it.shadow) continue;
    bool first = !first_seen[it.rank];
    first_seen[it.rank] = true;
    if (it.iter_ms <= 0 && !ended) continue;
    if (first && figures_.since_ns > run_start_ns) continue;
    auto [up_to, fresh] = counted_up_to_.try_emplace(it.rank, INT64_MIN);
    if (it.start_ns <= up_to->second) continue;
    up_to->second = it.start_ns;
    ++steps_[it.rank];
  }
}

LiveFigures& LiveWatch::analyse(store::RunReader& window, int64_t now_wall_ns, bool ended) {
  figures_.since_ns = since(now_wall_ns);
  figures_.until_ns = now_wall_ns;
  figures_.window = analyze_run(window);
  count_steps(store::run_start_ns(window), ended);

  // Each rank's steady steps' exposed time, in one pass over the window.
  std::map<int, std::vector<double>> exposed;
  for (const auto& it : figures_.window.iteration_list)
    if (!it.warmup && !it.shadow) exposed[it.rank].push_back(it.exposed_ms);
  figures_.ranks.clear();
  figures_.steps = figures_.window.ranks.empty() ? 0 : UINT64_MAX;
  for (const auto& r : figures_.window.ranks) {
    LiveRank live{.rank = r.rank,
                  .host = r.host,
                  .steps = steps_[r.rank],
                  .step_ms = r.iter_ms_median,
                  .comm_ms = r.comm_ms_median,
                  .exposed_ms = stats::median(std::move(exposed[r.rank])),
                  .late_ms = straggle_ms(r),
                  .dropped_events = r.dropped_events,
                  .fsdp_comm_ms = r.fsdp_comm_ms_median,
                  .fsdp_exposed_ms = r.fsdp_exposed_ms_median};
    figures_.steps = std::min(figures_.steps, live.steps);
    figures_.ranks.push_back(std::move(live));
  }
  return figures_;
}

}  // namespace ddpscope::analysis
