// `ddpscope tune --topology SPEC`: the sweep runs on a cluster emulated on
// this machine (tuner/emulation/), every rank in its node's network namespace,
// and its results are labelled with the topology's name.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "cli/launcher.h"
#include "cli/tune_flow.h"
#include "tuner/emulation/emulated_cluster.h"
#include "tuner/sweep.h"

namespace ddpscope::cli {

// Checks --topology against the other flags before anything runs, and derives
// --nproc from it (or checks that a given --nproc matches). UsageError on a
// malformed spec or a combination that cannot work. No-op without --topology.
void resolve_topology(TuneArgs& a, const std::vector<std::string>& backends, bool under_launcher);

// The emulated cluster of one coordinator's sweep, for as long as it lives.
class TopologyEmulation {
 public:
  // nullptr without --topology. Builds the cluster and prints what is and is
  // not emulated; UsageError where this machine or user cannot emulate.
  static std::unique_ptr<TopologyEmulation> open(const TuneArgs& a);

  // Starts each rank of `spec` inside its node.
  void place_ranks(LaunchSpec& spec) const;
  // Labels results measured on this cluster with the topology's name.
  void label(std::vector<tuner::SettingResult>& results) const;

 private:
  explicit TopologyEmulation(const tuner::Topology& t) : cluster_(t) {}
  tuner::emulation::EmulatedCluster cluster_;
};

}  // namespace ddpscope::cli
