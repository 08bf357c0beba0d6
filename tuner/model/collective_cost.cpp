#include "tuner/model/collective_cost.h"

#include <algorithm>
#include <cmath>

namespace ddpscope::tuner::model {
namespace {

int floor_log2(int p) {
  int k = 0;
  while ((2 << k) <= p) ++k;
  return k;
}

bool power_of_two(int p) { return p > 0 && (p & (p - 1)) == 0; }

int ceil_log2(int p) { return power_of_two(p) ? floor_log2(p) : floor_log2(p) + 1; }

// The slower of two link classes in each term: what a step crossing both waits for.
LinkCost slowest(const LinkCost& a, const LinkCost& b) {
  return {std::max(a.alpha_s, b.alpha_s), std::max(a.beta_s_per_byte, b.beta_s_per_byte),
          std::max(a.gamma_s_per_byte, b.gamma_s_per_byte), a.overlapped && b.overlapped};
}

// Reduction is the rank's own arithmetic, whichever link the bytes came over.
LinkCost with_reduction_of(LinkCost link, const LinkCost& rank) {
  link.gamma_s_per_byte = rank.gamma_s_per_byte;
  return link;
}

}  // namespace

const char* algorithm_name(Algorithm a) {
  switch (a) {
    case Algorithm::ring:
      return "ring";
    case Algorithm::recursive_doubling:
      return "recursive_doubling";
    case Algorithm::tree:
      return "tree";
    case Algorithm::hierarchical:
      return "hierarchical";
  }
  return "?";
}

std::optional<Algorithm> algorithm_named(const std::string& name) {
  for (Algorithm a :
       {Algorithm::ring, Algorithm::recursive_doubling, Algorithm::tree, Algorithm::hierarchical})
    if (name == algorithm_name(a)) return a;
  return std::nullopt;
}

CostTerms ring_terms(int p, double bytes) {
  if (p <= 1) return {};
  const double steps = p - 1;
  return {2 * steps, 2 * steps / p * bytes, steps / p * bytes};
}

CostTerms recursive_doubling_terms(int p, double bytes) {
  if (p <= 1) return {};
  const double exchanges = floor_log2(p) + (power_of_two(p) ? 0 : 2);
  return {exchanges, exchanges * bytes, exchanges * bytes};
}

CostTerms tree_terms(int p, double bytes) {
  if (p <= 1) return {};
  return {2.0 * ceil_log2(p), 2 * bytes, bytes};
}

double bytes_per_step(Algorithm a, int p, double bytes) {
  const CostTerms t = terms_for(a, p, bytes);
  return t.alpha > 0 ? t.beta_bytes / t.alpha : bytes;
}

CostTerms terms_for(Algorithm a, int p, double bytes) {
  switch (a) {
    case Algorithm::ring:
      return ring_terms(p, bytes);
    case Algorithm::recursive_doubling:
      return recursive_doubling_terms(p, bytes);
    case Algorithm::tree:
      return tree_terms(p, bytes);
    case Algorithm::hierarchical:
      return ring_terms(p, bytes);  // one node: just a ring
  }
  return {};
}

double allreduce_s(Algorithm a, int p, double bytes, const LinkCost& link) {
  return terms_for(a, p, bytes).seconds(link);
}

double ring_on_topology_s(const Topology& t, double bytes, const LinkCost& intra,
                          const LinkCost& inter) {
  const LinkCost link = t.nodes > 1 ? with_reduction_of(slowest(intra, inter), intra) : intra;
  return ring_terms(t.nranks(), bytes).seconds(link);
}

double hierarchical_s(const Topology& t, double bytes, const LinkCost& intra,
                      const LinkCost& inter) {
  double s = 0;
  if (t.ranks_per_node > 1) {
    const double chain_steps = t.ranks_per_node - 1;
    s += CostTerms{chain_steps, bytes, bytes}.seconds(intra);  // reduce to the leader
    s += CostTerms{chain_steps, bytes, 0}.seconds(intra);      // broadcast from it
  }
  s += ring_terms(t.nodes, bytes).seconds(with_reduction_of(inter, intra));
  return s;
}

double allreduce_on_topology_s(Algorithm a, const Topology& t, double bytes, const LinkCost& intra,
                               const LinkCost& inter) {
  if (t.nodes <= 1) return allreduce_s(a, t.nranks(), bytes, intra);
  switch (a) {
    case Algorithm::ring:
      return ring_on_topology_s(t, bytes, intra, inter);
    case Algorithm::hierarchical:
      return hierarchical_s(t, bytes, intra, inter);
    default:
      return allreduce_s(a, t.nranks(), bytes, with_reduction_of(slowest(intra, inter), intra));
  }
}

}  // namespace ddpscope::tuner::model
