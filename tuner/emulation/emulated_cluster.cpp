#include "tuner/emulation/emulated_cluster.h"

#include <unistd.h>

#include "tuner/emulation/emulation_error.h"
#include "tuner/emulation/link_shaping.h"
#include "tuner/emulation/system_command.h"
#include "tuner/emulation/tcp_congestion.h"

namespace ddpscope::tuner::emulation {
namespace {

constexpr int kMaxNodes = 250;           // one /24 of addresses
constexpr double kMaxShapedGbps = 1000;  // tbf's burst (1 ms of traffic) must fit 32 bits
constexpr const char* kSubnet = "198.18.0.";
constexpr const char* kBridge = "dds-switch";
constexpr const char* kUplink = "dds-uplink";  // a node's end of its link

std::string switch_port(int node) { return "dds-node" + std::to_string(node); }

// Names derive from the pid and cleanup is per process: one cluster at a time.
bool g_cluster_exists = false;

}  // namespace

void check_can_emulate(const Topology& t) {
  const std::string what = "emulating topology " + t.name();
  if (geteuid() != 0)
    throw EmulationUnavailable(what +
                               " needs root (network namespaces and tc): run ddpscope tune as "
                               "root, or leave out --topology");
  for (const char* program : {"ip", "tc"})
    if (find_program(program).empty())
      throw EmulationUnavailable(what + " needs iproute2's `" + program +
                                 "`, which is not on PATH or in /usr/sbin");
  if (t.nodes > kMaxNodes)
    throw EmulationUnavailable(what + ": at most " + std::to_string(kMaxNodes) +
                               " nodes can be emulated");
  if (t.inter.bandwidth_gbps > kMaxShapedGbps)
    throw EmulationUnavailable(what + ": links faster than " + format_bandwidth(kMaxShapedGbps) +
                               " cannot be shaped (leave inter out for an unshaped link)");
}

EmulatedCluster::EmulatedCluster(const Topology& topology)
    : topology_(topology), prefix_(run_prefix()) {
  check_can_emulate(topology_);
  if (g_cluster_exists) throw EmulationError("one emulated cluster per process at a time");
  ip_ = find_program("ip");
  guard_ = std::make_unique<CleanupGuard>();
  stale_ = remove_stale_namespaces();
  try {
    build();
  } catch (...) {
    guard_.reset();  // removes what was built
    throw;
  }
  g_cluster_exists = true;
}

EmulatedCluster::~EmulatedCluster() {
  guard_.reset();  // removes the namespaces, and with them the links and qdiscs
  g_cluster_exists = false;
}

std::string EmulatedCluster::node_namespace(int node) const {
  return prefix_ + "node" + std::to_string(node);
}

std::string EmulatedCluster::node_address(int node) const {
  return kSubnet + std::to_string(node + 1);
}

std::string EmulatedCluster::switch_namespace() const { return prefix_ + "switch"; }

void EmulatedCluster::build() {
  const std::string sw = switch_namespace();
  register_namespace(sw);
  run_command({ip_, "netns", "add", sw});
  run_command({ip_, "-n", sw, "link", "add", kBridge, "type", "bridge"});
  run_command({ip_, "-n", sw, "link", "set", kBridge, "up"});
  for (int node = 0; node < topology_.nodes; ++node) add_node(node);
}

void EmulatedCluster::add_node(int node) {
  const std::string ns = node_namespace(node), sw = switch_namespace(), port = switch_port(node);
  register_namespace(ns);
  run_command({ip_, "netns", "add", ns});
  run_command({ip_, "-n", ns, "link", "set", "lo", "up"});
  set_congestion_control(ns, kEmulatedCongestionControl);  // not the host's
  // Created inside the switch's namespace with its peer put straight into the
  // node's: neither end ever appears in the host's own namespace.
  run_command(
      {ip_, "-n", sw, "link", "add", port, "type", "veth", "peer", "name", kUplink, "netns", ns});
  run_command({ip_, "-n", sw, "link", "set", port, "master", kBridge, "up"});
  run_command({ip_, "-n", ns, "addr", "add", node_address(node) + "/24", "dev", kUplink});
  run_command({ip_, "-n", ns, "link", "set", kUplink, "up"});
  if (topology_.inter.bandwidth_gbps > 0) {
    shape_egress(ns, kUplink, topology_.inter.bandwidth_gbps);  // node -> switch
    shape_egress(sw, port, topology_.inter.bandwidth_gbps);     // switch -> node
  }
}

std::vector<std::string> EmulatedCluster::not_emulated() const {
  std::vector<std::string> out;
  const char* no_netem = ": latency is not emulated (this kernel has no netem qdisc)";
  if (topology_.inter.latency_us > 0)
    out.push_back("inter_lat=" + format_latency(topology_.inter.latency_us) + no_netem);
  if (topology_.intra.latency_us > 0)
    out.push_back("intra_lat=" + format_latency(topology_.intra.latency_us) + no_netem);
  if (topology_.intra.bandwidth_gbps > 0)
    out.push_back("intra=" + format_bandwidth(topology_.intra.bandwidth_gbps) +
                  ": intra-node bandwidth is not emulated (ranks of a node use this "
                  "machine's loopback)");
  return out;
}

std::string EmulatedCluster::describe() const {
  const int n = topology_.nodes;
  const std::string head = "topology " + topology_.name() + " emulated: ";
  const std::string ranks = std::to_string(topology_.ranks_per_node) + " ranks";
  const std::string tcp = std::string(", TCP congestion control ") + kEmulatedCongestionControl;
  if (n == 1)
    return head + "one network namespace (" + node_namespace(0) + ") of " + ranks +
           " on its loopback" + tcp;
  const std::string links = topology_.inter.bandwidth_gbps > 0
                                ? "links shaped to " +
                                      format_bandwidth(topology_.inter.bandwidth_gbps) +
                                      "/s each way (tc tbf)"
                                : "unshaped links";
  return head + std::to_string(n) + " network namespaces (" + prefix_ + "node0.." +
         std::to_string(n - 1) + ") of " + ranks + " each, joined through a bridge by " + links +
         tcp;
}

}  // namespace ddpscope::tuner::emulation
