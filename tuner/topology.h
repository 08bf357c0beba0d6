// A cluster topology the tuner measures on (emulated with network namespaces)
// or predicts for (the cost model): nodes x ranks per node, and the two link
// classes a DDP all-reduce crosses — inside a node and between nodes.
// Shorthand: "2x2:inter=1gbit" (docs/tuner.md); file: JSON of the same fields.
#pragma once

#include <string>

#include "profiler/core/input_error.h"

namespace ddpscope::tuner {

// One link class. A bandwidth of 0 means "not limited" (whatever the machine
// gives: shared memory / loopback inside one host); latency is one-way.
struct Link {
  double bandwidth_gbps = 0;  // gigabits per second, as networks are sold
  double latency_us = 0;
};

struct Topology {
  int nodes = 1;
  int ranks_per_node = 1;
  Link intra;  // between ranks of one node
  Link inter;  // between nodes (a rank's path to another node)
  int nranks() const { return nodes * ranks_per_node; }
  // Canonical shorthand, e.g. "2x2:inter=1gbit"; what results are labelled with.
  std::string name() const;
};

// Parses the shorthand or, when `spec` names an existing file, the JSON file.
// A malformed topology throws InputError: one line naming the spec or file
// and the problem.
Topology parse_topology(const std::string& spec);
// The JSON file's form from its text (`path` names it in messages).
Topology topology_from_json_text(const std::string& path, const std::string& text);

// The shorthand's units, largest that keeps the number >= 1: "200mbit", "5us".
std::string format_bandwidth(double gbps);
std::string format_latency(double us);

}  // namespace ddpscope::tuner
