// The all-reduce formulas against values worked out by hand.
#include <catch2/catch.hpp>

#include "tuner/model/collective_cost.h"

using namespace ddpscope::tuner;
using namespace ddpscope::tuner::model;

namespace {
// α = 10 µs, β = 1 ns/B (1 GB/s), γ = 0.5 ns/B.
const LinkCost kLink{10e-6, 1e-9, 0.5e-9};
const double kMB = 1e6;
}  // namespace

TEST_CASE("ring all-reduce: 2(p-1) steps of S/p, half of them reducing") {
  // p = 4: 6·10 µs + 2·3/4·1 MB·1 ns + 3/4·1 MB·0.5 ns = 60 µs + 1.5 ms + 0.375 ms
  CHECK(allreduce_s(Algorithm::ring, 4, kMB, kLink) == Approx(1.935e-3));
  // p = 2: 2·10 µs + 1 MB·1 ns + 0.5 MB·0.5 ns
  CHECK(allreduce_s(Algorithm::ring, 2, kMB, kLink) == Approx(20e-6 + 1e-3 + 0.25e-3));
  CHECK(allreduce_s(Algorithm::ring, 1, kMB, kLink) == 0);
}

TEST_CASE("recursive doubling: log2 p full exchanges, two more off a power of two") {
  // p = 4: 2·(10 µs + 1 ms + 0.5 ms)
  CHECK(allreduce_s(Algorithm::recursive_doubling, 4, kMB, kLink) == Approx(3.02e-3));
  // p = 6: floor(log2 6) = 2, plus 2 = 4 exchanges
  CHECK(allreduce_s(Algorithm::recursive_doubling, 6, kMB, kLink) == Approx(4 * 1.51e-3));
}

TEST_CASE("tree: 2·depth latencies, the buffer twice on the wire, reduced once") {
  // p = 8: depth 3 → 6·10 µs + 2·1 ms + 0.5 ms
  CHECK(allreduce_s(Algorithm::tree, 8, kMB, kLink) == Approx(2.56e-3));
  // p = 5: depth ceil(log2 5) = 3
  CHECK(allreduce_s(Algorithm::tree, 5, kMB, kLink) == Approx(2.56e-3));
}

TEST_CASE("a ring across nodes runs every step at the slowest link's pace") {
  Topology t;
  t.nodes = 2;
  t.ranks_per_node = 2;
  const LinkCost inter{50e-6, 8e-9, 0};  // 1 Gbit/s, slower per message too
  // 6 steps: 6·50 µs + 1.5 MB·8 ns + 0.75 MB·0.5 ns (the rank's own reduction)
  CHECK(ring_on_topology_s(t, kMB, kLink, inter) == Approx(300e-6 + 12e-3 + 0.375e-3));
  t.nodes = 1;
  t.ranks_per_node = 4;
  CHECK(ring_on_topology_s(t, kMB, kLink, inter) == Approx(1.935e-3));
}

TEST_CASE("hierarchical: chain reduce in the node, ring between nodes, chain broadcast") {
  Topology t;
  t.nodes = 2;
  t.ranks_per_node = 4;
  const LinkCost inter{50e-6, 8e-9, 0};
  const double reduce = 3 * 10e-6 + 1e-3 + 0.5e-3;  // 3 steps, S on the wire, S reduced
  const double broadcast = 3 * 10e-6 + 1e-3;        // 3 steps, S on the wire
  const double leaders = 2 * 50e-6 + 1 * kMB * 8e-9 + 0.5 * kMB * 0.5e-9;  // ring of 2
  CHECK(hierarchical_s(t, kMB, kLink, inter) == Approx(reduce + broadcast + leaders));
  CHECK(allreduce_on_topology_s(Algorithm::hierarchical, t, kMB, kLink, inter) ==
        Approx(reduce + broadcast + leaders));
}

TEST_CASE("the terms are what the fit uses: time = terms · link") {
  auto t = ring_terms(3, 3000);
  CHECK(t.alpha == 4);
  CHECK(t.beta_bytes == Approx(4000));
  CHECK(t.gamma_bytes == Approx(2000));
  CHECK(t.seconds(kLink) == Approx(4 * 10e-6 + 4000e-9 + 1000e-9));
}

TEST_CASE("algorithms by name: each name back to its algorithm, others refused") {
  for (Algorithm a :
       {Algorithm::ring, Algorithm::recursive_doubling, Algorithm::tree, Algorithm::hierarchical})
    CHECK(algorithm_named(algorithm_name(a)) == a);
  CHECK_FALSE(algorithm_named("Ring").has_value());
  CHECK_FALSE(algorithm_named("").has_value());
  CHECK(bytes_per_step(Algorithm::ring, 4, 4e6) == Approx(1e6));  // a ring step moves bytes/p
}
