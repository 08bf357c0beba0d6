// recommend(): the rule families in order (recommend_rules.h), and the rule
// that needs nothing of DDP: NCCL's algorithm choice at large sizes.
#include "profiler/analysis/recommend.h"

#include <algorithm>

#include "profiler/analysis/recommend_rules.h"

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

using rules::fmt;
using rules::mib;

// NCCL only, where its profiler plugin did not say what it chose: large
// all-reduces far below the bus bandwidth smaller ones reached in the same run
// point at the algorithm/protocol choice.
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
  rules::straggler_rules(run, out);
  rules::fsdp_rules(run, out);
  if (!rules::nccl_choice_rules(run, out)) nccl_rules(run, out);
  return out;
}

}  // namespace ddpscope::analysis
