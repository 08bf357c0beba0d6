// static_graph=True only where DDP's own configuration says it changes what
// DDP does each iteration.
//
// With find_unused_parameters=False, static_graph saves nothing per iteration:
// DDP neither searches the graph nor all-reduces a used-parameter map, and it
// rebuilds its buckets in gradient-ready order once either way (the reducer's
// should_rebuild_buckets() is `(static_graph || !find_unused_parameters) &&
// !has_rebuilt`). With find_unused_parameters=True and no static graph, DDP
// (a) walks the autograd graph from the outputs after every forward,
// (b) all-reduces its used-parameter map every iteration, and (c) never
// rebuilds its buckets, which stay in reversed parameter order rather than the
// order gradients become ready. static_graph=True records the graph once and
// removes all three. A run whose flags are unknown (pattern fall-back) gets no
// advice: the same buckets every iteration say nothing about the flags.
//
// The map's all-reduce is classed ddp_control, but so are the constructor's
// parameter broadcast, buffer broadcasts and join flags, and `roles` does not
// split them: a per-iteration figure from it would be mostly one-off traffic
// (seen: in a 20-step run with no unused parameters, 13 MB of control bytes
// per rank, the size of the model's parameters: the constructor's broadcast),
// so the reason quotes none.
#include <string>

#include "profiler/analysis/recommend_rules.h"

namespace ddpscope::analysis::rules {
namespace {

Recommendation static_graph_advice(const RunAnalysis& run, const DdpInstanceSummary& d) {
  std::string why =
      instance_prefix(run, d.instance) +
      "find_unused_parameters=True makes DDP walk the autograd graph after every forward and "
      "all-reduce a map of the parameters used";
  if (!d.rebuilt)
    why +=
        "; it also keeps its first bucket layout (parameter order) instead of rebuilding the "
        "buckets in the order gradients become ready";
  why +=
      ". If the same parameters are used every iteration (DDP's _get_ddp_logging_data()"
      "[\"can_set_static_graph\"] says so after a run), static_graph=True learns the graph "
      "once and does none of this; if no parameter is ever unused, "
      "find_unused_parameters=False does the same";
  return {"static_graph", "True", why};
}

}  // namespace

void static_graph_rules(const RunAnalysis& run, std::vector<Recommendation>& out) {
  for (const auto& d : run.ddp)
    if (config_known(d) && d.find_unused_parameters && !d.static_graph)
      out.push_back(static_graph_advice(run, d));
}

}  // namespace ddpscope::analysis::rules
