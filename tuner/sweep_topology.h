// A sweep on an emulated topology (`tune --topology SPEC`): the cluster is
// built on this machine (tuner/emulation/), every rank runs in its node's
// network namespace, and results are labelled with the topology's name.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "profiler/core/rank_launcher.h"
#include "tuner/emulation/emulated_cluster.h"
#include "tuner/sweep.h"
#include "tuner/sweep_spec.h"

namespace ddpscope::tuner {

// Checks s.topology against the rest of the sweep before anything runs, and
// derives s.nproc from it (or checks that a given nproc matches).
// InputError on a malformed spec, InputError on a combination that
// cannot work. No-op without a topology; only the parse for a dry run.
void resolve_topology(SweepSpec& s, bool nproc_given, bool dry_run, bool under_launcher);

// The emulated cluster of one coordinator's sweep, for as long as it lives.
class TopologyEmulation {
 public:
  // nullptr without a topology. Builds the cluster and prints what is and is
  // not emulated; EmulationUnavailable where this machine or user cannot.
  static std::unique_ptr<TopologyEmulation> open(const SweepSpec& s);

  // Starts each rank of `spec` inside its node.
  void place_ranks(core::LaunchSpec& spec) const;
  // Labels results measured on this cluster with the topology's name.
  void label(std::vector<SettingResult>& results) const;

 private:
  explicit TopologyEmulation(const Topology& t) : cluster_(t) {}
  emulation::EmulatedCluster cluster_;
};

}  // namespace ddpscope::tuner
