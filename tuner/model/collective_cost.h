// The α-β-γ cost of one all-reduce, per algorithm, as pure functions.
//
// A link class (inside a node, between nodes) is three numbers: α, the fixed
// cost of one message step (latency plus software overhead); β, the time per
// byte a link moves; γ, the time per byte a rank spends reducing. Each
// algorithm is a count of those per all-reduce (its CostTerms), so a time is
// terms · link, and the same terms are the rows of the calibration fit.
#pragma once

#include <algorithm>
#include <optional>
#include <string>

#include "tuner/topology.h"

namespace ddpscope::tuner::model {

struct LinkCost {
  double alpha_s = 0;           // per message step, seconds
  double beta_s_per_byte = 0;   // per byte on the wire
  double gamma_s_per_byte = 0;  // per byte reduced
  // The message steps and the bytes overlap instead of adding up: an
  // all-reduce takes the longer of the two (plus reduction). So it is where
  // α is time spent waiting to be scheduled rather than working (ranks
  // oversubscribing the cores) while the bytes move in the meantime
  // (a shaped link, the other ranks' copies): the calibration picks it
  // when it fits the measurements clearly better (calibration.h).
  bool overlapped = false;
};

// The link's costs at `factor` times their length (CPU work on a share of
// the cores it was measured on, core_sharing.h).
inline LinkCost scaled(LinkCost link, double factor) {
  link.alpha_s *= factor;
  link.beta_s_per_byte *= factor;
  link.gamma_s_per_byte *= factor;
  return link;
}

// How many α, β-bytes and γ-bytes one all-reduce costs on one link class.
struct CostTerms {
  double alpha = 0, beta_bytes = 0, gamma_bytes = 0;
  double seconds(const LinkCost& link) const {
    const double messages = alpha * link.alpha_s, bytes = beta_bytes * link.beta_s_per_byte;
    return (link.overlapped ? std::max(messages, bytes) : messages + bytes) +
           gamma_bytes * link.gamma_s_per_byte;
  }
  CostTerms& operator+=(const CostTerms& o) {
    alpha += o.alpha;
    beta_bytes += o.beta_bytes;
    gamma_bytes += o.gamma_bytes;
    return *this;
  }
};

enum class Algorithm { ring, recursive_doubling, tree, hierarchical };
const char* algorithm_name(Algorithm a);
// The algorithm of that name; nullopt for any other name.
std::optional<Algorithm> algorithm_named(const std::string& name);

// Ring (reduce-scatter then all-gather): 2(p-1) steps of bytes/p each;
// the first p-1 steps reduce what they receive.
CostTerms ring_terms(int p, double bytes);
// Recursive doubling: log2(p) exchanges of the whole buffer, each reduced;
// a non-power-of-two p adds one exchange before and one after (the excess
// ranks fold into the power-of-two group and get the result back).
CostTerms recursive_doubling_terms(int p, double bytes);
// Pipelined binary tree (NCCL's tree): reduce up, broadcast down, 2·depth
// steps of latency; every rank sends and receives the whole buffer twice in
// bandwidth terms (NCCL's algbw = busbw / 2) and reduces it once.
CostTerms tree_terms(int p, double bytes);
CostTerms terms_for(Algorithm a, int p, double bytes);

// What one message step of the all-reduce moves (bytes on the wire per
// step: bytes/p for a ring), the size by which its cost is looked up.
double bytes_per_step(Algorithm a, int p, double bytes);

// One all-reduce of `bytes` over `p` ranks on one link class.
double allreduce_s(Algorithm a, int p, double bytes, const LinkCost& link);

// A flat ring over a topology, ranks numbered node by node: every step moves
// bytes/p over every link at once, so each step takes as long as the slowest
// link it crosses (the inter-node link once there are two nodes).
double ring_on_topology_s(const Topology& t, double bytes, const LinkCost& intra,
                          const LinkCost& inter);

// Hierarchical: reduce to one leader per node (a pipelined chain: ppn-1
// steps of latency, the buffer once), ring all-reduce among the leaders over
// the inter-node link, broadcast back inside the node (a pipelined chain).
double hierarchical_s(const Topology& t, double bytes, const LinkCost& intra,
                      const LinkCost& inter);

// The cost of any algorithm over a topology (a single-node topology uses the
// intra link only; recursive doubling and tree cross the slowest link class).
double allreduce_on_topology_s(Algorithm a, const Topology& t, double bytes, const LinkCost& intra,
                               const LinkCost& inter);

}  // namespace ddpscope::tuner::model
