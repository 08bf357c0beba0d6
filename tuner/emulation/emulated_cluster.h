// A cluster emulated on this machine: each node a network namespace, every
// node's link to a bridge (the "switch", in a namespace of its own, so the
// host's own networking is never touched) shaped to the inter-node bandwidth
// in both directions. Ranks of one node share their namespace and talk over
// its loopback; ranks of different nodes cross two shaped links.
//
//   ddpscope-<pid>-switch   bridge dds-switch, ports dds-node<i>
//   ddpscope-<pid>-node<i>  lo, dds-uplink = 198.18.0.<i+1>/24
//
// 198.18.0.0/15 is reserved for network benchmark tests (RFC 2544) and lives
// only inside these namespaces: no route leads out of them.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tuner/emulation/namespace_cleanup.h"
#include "tuner/topology.h"

namespace ddpscope::tuner::emulation {

class EmulatedCluster {
 public:
  // Checks that this process can emulate (root, `ip`, `tc`: else
  // EmulationUnavailable), removes stale namespaces of dead runs, builds the
  // cluster. On any failure, what was built is removed before the throw.
  // One cluster per process at a time (names and cleanup are per process).
  explicit EmulatedCluster(const Topology& topology);
  ~EmulatedCluster();  // removes the namespaces, and with them links and qdiscs

  const Topology& topology() const { return topology_; }
  // Ranks are numbered consecutively per node, as torchrun and mpirun do.
  int node_of_rank(int rank) const { return rank / topology_.ranks_per_node; }
  std::string node_namespace(int node) const;
  std::string node_address(int node) const;
  std::string switch_namespace() const;
  // Stale namespaces of dead runs removed on the way in.
  const std::vector<std::string>& stale_removed() const { return stale_; }
  // What the topology asks for that this emulation does not reproduce, one
  // line each ("inter_lat=5us: latency is not emulated ...").
  std::vector<std::string> not_emulated() const;
  // One line: how the topology is emulated.
  std::string describe() const;

 private:
  void build();
  void add_node(int node);

  Topology topology_;
  std::string prefix_, ip_;
  std::vector<std::string> stale_;
  std::unique_ptr<CleanupGuard> guard_;
};

// Throws EmulationUnavailable unless this process can emulate `topology`.
void check_can_emulate(const Topology& topology);

}  // namespace ddpscope::tuner::emulation
