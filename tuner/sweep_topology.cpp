#include "tuner/sweep_topology.h"

#include <cstdio>
#include <iostream>

#include "tuner/emulation/rank_placement.h"

namespace ddpscope::tuner {

void resolve_topology(SweepSpec& s, bool nproc_given, bool dry_run, bool under_launcher) {
  if (s.topology.empty()) return;
  const Topology t = parse_topology(s.topology);
  if (dry_run) return;  // plans only: nothing runs on the topology
  if (under_launcher)
    throw InputError(
        "--topology emulates a cluster on this machine; under mpirun, srun or "
        "torchrun the ranks are already placed (leave it out)");
  for (const auto& b : s.backends)
    if (b != "gloo" && !is_model_backend(b))
      throw InputError("--topology: emulated topologies run the gloo backend only, not '" + b +
                       "'");
  if (nproc_given && s.nproc != t.nranks())
    throw InputError("--nproc " + std::to_string(s.nproc) + " does not match --topology " +
                     t.name() + " (" + std::to_string(t.nranks()) + " ranks; leave --nproc out)");
  s.nproc = t.nranks();
}

std::unique_ptr<TopologyEmulation> TopologyEmulation::open(const SweepSpec& s) {
  if (s.topology.empty()) return nullptr;
  const Topology t = parse_topology(s.topology);  // resolve_topology checked it
  std::unique_ptr<TopologyEmulation> e(new TopologyEmulation(t));
  std::cout << e->cluster_.describe() << "\n";
  for (const auto& line : e->cluster_.not_emulated()) std::cout << "note: " << line << "\n";
  for (const auto& name : e->cluster_.stale_removed())
    std::cout << "note: removed network namespace " << name << ", left behind by a dead run\n";
  std::cout << std::flush;
  return e;
}

void TopologyEmulation::place_ranks(core::LaunchSpec& spec) const {
  spec.in_child = [this](int rank) {
    std::string error;
    if (emulation::enter_node_of_rank(cluster_, rank, &error)) return true;
    fprintf(stderr, "ddpscope: tune: rank %d: %s\n", rank, error.c_str());
    return false;
  };
}

void TopologyEmulation::label(std::vector<SettingResult>& results) const {
  for (auto& r : results) r.topology = cluster_.topology().name();
}

}  // namespace ddpscope::tuner
