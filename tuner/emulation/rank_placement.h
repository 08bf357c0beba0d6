// Putting a rank into its emulated node: called in the rank's own process
// after fork and before exec, it joins the node's network namespace and sets
// the address the rank's Gloo device binds to (DDPSCOPE_TUNE_IFACE_ADDR, which
// the Gloo backend reads), so every connection the rank makes starts at its
// node and inter-node traffic crosses the shaped links.
#pragma once

#include <string>

#include "tuner/emulation/emulated_cluster.h"

namespace ddpscope::tuner::emulation {

// Returns false with `error` set when the rank cannot enter its namespace.
bool enter_node_of_rank(const EmulatedCluster& cluster, int rank, std::string* error);

// Joins the network namespace `netns` (a name under /run/netns).
bool join_network_namespace(const std::string& netns, std::string* error);

}  // namespace ddpscope::tuner::emulation
