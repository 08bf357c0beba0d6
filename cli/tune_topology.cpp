#include "cli/tune_topology.h"

#include <cstdio>
#include <iostream>

#include "cli/commands.h"
#include "cli/tune_model.h"
#include "tuner/emulation/emulation_error.h"
#include "tuner/emulation/rank_placement.h"

namespace ddpscope::cli {

void resolve_topology(TuneArgs& a, const std::vector<std::string>& backends, bool under_launcher) {
  if (a.topology.empty()) return;
  tuner::Topology t;
  try {
    t = tuner::parse_topology(a.topology);
  } catch (const tuner::TopologyError& e) {
    throw UsageError(e.what());
  }
  if (a.dry_run) return;  // plans only: nothing runs on the topology
  if (under_launcher)
    throw UsageError(
        "--topology emulates a cluster on this machine; under mpirun, srun or "
        "torchrun the ranks are already placed (leave it out)");
  for (const auto& b : backends)
    if (b != "gloo" && !is_model_backend(b))
      throw UsageError("--topology: emulated topologies run the gloo backend only, not '" + b +
                       "'");
  if (a.nproc_given && a.nproc != t.nranks())
    throw UsageError("--nproc " + std::to_string(a.nproc) + " does not match --topology " +
                     t.name() + " (" + std::to_string(t.nranks()) + " ranks; leave --nproc out)");
  a.nproc = t.nranks();
}

std::unique_ptr<TopologyEmulation> TopologyEmulation::open(const TuneArgs& a) {
  if (a.topology.empty()) return nullptr;
  const tuner::Topology t = tuner::parse_topology(a.topology);  // resolve_topology checked it
  std::unique_ptr<TopologyEmulation> e;
  try {
    e.reset(new TopologyEmulation(t));
  } catch (const tuner::emulation::EmulationUnavailable& err) {
    throw UsageError(err.what());
  }
  std::cout << e->cluster_.describe() << "\n";
  for (const auto& line : e->cluster_.not_emulated()) std::cout << "note: " << line << "\n";
  for (const auto& name : e->cluster_.stale_removed())
    std::cout << "note: removed network namespace " << name << ", left behind by a dead run\n";
  std::cout << std::flush;
  return e;
}

void TopologyEmulation::place_ranks(LaunchSpec& spec) const {
  spec.in_child = [this](int rank) {
    std::string error;
    if (tuner::emulation::enter_node_of_rank(cluster_, rank, &error)) return true;
    fprintf(stderr, "ddpscope: tune: rank %d: %s\n", rank, error.c_str());
    return false;
  };
}

void TopologyEmulation::label(std::vector<tuner::SettingResult>& results) const {
  for (auto& r : results) r.topology = cluster_.topology().name();
}

}  // namespace ddpscope::cli
