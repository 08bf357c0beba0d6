// TEMPORARY (branch `model` only; deleted when the emulation branch's
// tuner/topology.cpp is merged): the smallest parse_topology the cost model's
// CLI needs — "NxM" with optional ":inter=<n>gbit|mbit,intra=<n>gbit|mbit".
// No JSON files, no latencies.
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "tuner/topology.h"

namespace ddpscope::tuner {
namespace {

double gbps_of(const std::string& spec, const std::string& value) {
  char* end = nullptr;
  double v = std::strtod(value.c_str(), &end);
  std::string unit = end ? end : "";
  if (!(v > 0) || (unit != "gbit" && unit != "mbit"))
    throw TopologyError(spec + ": bandwidth '" + value + "' is not <number>gbit or <number>mbit");
  return unit == "gbit" ? v : v / 1000;
}

}  // namespace

std::string Topology::name() const {
  std::ostringstream s;
  s << nodes << "x" << ranks_per_node;
  if (inter.bandwidth_gbps > 0) s << ":inter=" << inter.bandwidth_gbps << "gbit";
  if (intra.bandwidth_gbps > 0)
    s << (inter.bandwidth_gbps > 0 ? "," : ":") << "intra=" << intra.bandwidth_gbps << "gbit";
  return s.str();
}

Topology parse_topology(const std::string& spec) {
  Topology t;
  const auto colon = spec.find(':');
  const std::string shape = spec.substr(0, colon);
  char rest = 0;
  if (std::sscanf(shape.c_str(), "%dx%d%c", &t.nodes, &t.ranks_per_node, &rest) != 2 ||
      t.nodes < 1 || t.ranks_per_node < 1)
    throw TopologyError(spec + ": expected NODESxRANKS_PER_NODE, e.g. 2x2:inter=1gbit");
  std::stringstream options(colon == std::string::npos ? "" : spec.substr(colon + 1));
  for (std::string kv; std::getline(options, kv, ',');) {
    const auto eq = kv.find('=');
    const std::string key = kv.substr(0, eq),
                      value = eq == std::string::npos ? "" : kv.substr(eq + 1);
    if (key == "inter")
      t.inter.bandwidth_gbps = gbps_of(spec, value);
    else if (key == "intra")
      t.intra.bandwidth_gbps = gbps_of(spec, value);
    else
      throw TopologyError(spec + ": unknown option '" + key + "' (inter, intra)");
  }
  return t;
}

}  // namespace ddpscope::tuner
