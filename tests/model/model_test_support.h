// Small builders the model's tests share.
#pragma once

#include "tuner/model/calibration.h"
#include "tuner/topology.h"

namespace ddpscope::tuner::model::test {

// A fit with this cost and nothing else (no quality figures, no ratios).
inline LinkFit link_fit(const LinkCost& cost) {
  LinkFit f;
  f.cost = cost;
  return f;
}

// `nodes` x `per_node` ranks, the inter-node link declared at `inter_gbps`.
inline Topology shape(int nodes, int per_node, double inter_gbps = 0) {
  Topology t;
  t.nodes = nodes;
  t.ranks_per_node = per_node;
  t.inter.bandwidth_gbps = inter_gbps;
  return t;
}

}  // namespace ddpscope::tuner::model::test
