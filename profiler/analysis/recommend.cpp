#include "profiler/analysis/recommend.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "profiler/analysis/recommend_rules.h"
#include "profiler/core/stats.h"

namespace ddpscope::analysis {
namespace rules {

const DdpInstanceSummary* known_config(const RunAnalysis& run, int instance) {
  for (const auto& d : run.ddp)
    if (d.instance == instance && config_known(d)) return &d;
  return nullptr;
}

std::string instance_prefix(const RunAnalysis& run, int instance) {
  if (run.ddp.size() < 2) return "";
  for (const auto& d : run.ddp)
    if (d.instance == instance && !d.module.empty())
      return "DDP instance " + std::to_string(instance) + " (" + d.module + "): ";
  return "DDP instance " + std::to_string(instance) + ": ";
}

}  // namespace rules

namespace {

std::string fmt(const char* f, double a, double b = 0, double c = 0) {
  char buf[512];
  snprintf(buf, sizeof buf, f, a, b, c);
  return buf;
}

double mib(double bytes) { return bytes / (1024.0 * 1024.0); }

// A rank is a straggler when it enters iterations (or collectives) far later
// than the typical rank and is the one the others wait for.
void straggler_rules(const RunAnalysis& run, std::vector<Recommendation>& out) {
  if (run.ranks.size() < 2) return;
  auto lateness = straggle_ms;
  std::vector<double> lates;
  for (const auto& r : run.ranks) lates.push_back(lateness(r));
  // Not the median (profiler/core/stats.h) on purpose: the lower middle rank.
  // With two ranks the median would be halfway to the straggler itself, which
  // then could never be 3x later than "typical".
  std::sort(lates.begin(), lates.end());
  double typical = lates[(lates.size() - 1) / 2];
  for (const auto& r : run.ranks)
    if (lateness(r) > std::max(1.0, 3 * typical))
      out.push_back({"rank " + std::to_string(r.rank), "straggler",
                     fmt("enters iterations %.2f ms late (median; the typical rank %.2f ms) and "
                         "is last into %.0f%% of collectives: look at its input pipeline, host "
                         "load or GPU",
                         lateness(r), typical, r.last_share_pct) +
                         (r.host.empty() ? "" : " (host " + r.host + ")")});
}

// NCCL only: large all-reduces far below the bus bandwidth smaller ones
// reached in the same run point at the algorithm/protocol choice.
void nccl_rules(const RunAnalysis& run, std::vector<Recommendation>& out) {
  if (run.backend != "nccl") return;
  for (const auto& big : run.collectives) {
    if (big.op != Op::allreduce || big.bytes < (16u << 20)) continue;
    double best_smaller = 0;
    for (const auto& s : run.collectives)
      if (s.op == Op::allreduce && s.bytes < big.bytes)
        best_smaller = std::max(best_smaller, s.busbw_gbps);
    if (best_smaller > 0 && big.busbw_gbps < 0.5 * best_smaller) {
      out.push_back({"NCCL_ALGO", "Ring or Tree: compare with `ddpscope tune --backend nccl`",
                     fmt("%.0f MiB all-reduces reach %.2f GB/s bus bandwidth, under half of the "
                         "%.2f GB/s smaller ones reached: NCCL's tuner may be picking a poor "
                         "algorithm or protocol at this size",
                         mib(big.bytes), big.busbw_gbps, best_smaller)});
      return;
    }
  }
}

}  // namespace

std::vector<Recommendation> recommend(const RunAnalysis& run) {
  std::vector<Recommendation> out;
  rules::bucket_rules(run, out);
  rules::static_graph_rules(run, out);
  straggler_rules(run, out);
  nccl_rules(run, out);
  return out;
}

}  // namespace ddpscope::analysis
