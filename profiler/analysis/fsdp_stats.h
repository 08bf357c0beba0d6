// What the report knows about an FSDP2 (fully_shard) job: per root, each unit
// (one fully_shard call's parameters) and per unit each phase of its
// communication, over the steady steps of every rank (fsdp_units.h computes
// them; docs/analysis.md, "FSDP2 units", defines each figure).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "profiler/core/records.h"
#include "profiler/core/vocab.h"

namespace ddpscope::analysis {

// One phase of one unit: forward or backward all-gather, reduce-scatter, or
// HSDP's all-reduce (FsdpRegionKind's first four).
struct FsdpPhaseStats {
  FsdpRegionKind phase = FsdpRegionKind::forward_all_gather;
  Op op = Op::allgather;         // what FSDP asked for
  std::optional<Op> carried_as;  // what the backend ran, where it differs (Gloo: allreduce)
  std::string dtype;             // the collective's dtype, FSDP's account
  uint64_t bytes = 0;            // the unit's unsharded (padded) size in that dtype
  uint64_t wire_bytes = 0;       // what the recorded collective carried (median)
  double per_iteration = 0;      // calls per step (median over ranks)
  uint64_t calls = 0;            // over every rank and steady step
  uint64_t prefetched = 0;       // of which another unit issued ahead of need
  double median_us = 0, p95_us = 0;
  double busbw_gbps = 0;           // from the median, for the op that ran
  double exposed_us = 0;           // median per step: the time compute waited for it
  std::optional<double> slack_us;  // all-gathers: median need - completion (negative: late)
  std::optional<double> tail_us;   // reductions: median per step of the part after backward ended
  double exposed_steps_pct = 0;    // steps where it was mostly exposed (>= half its time)
};

struct FsdpUnitStats {
  int unit = 0;
  std::string fqn;     // the module's name in the root ("" for the root itself)
  std::string module;  // the module's class
  int params = 0;
  bool reshard_after_forward = true;
  std::vector<FsdpPhaseStats> phases;
  // Per rank and steady step, the unit's all-gathers' exposed time (µs): the
  // samples `check` compares unit by unit (not in the report's formats).
  std::vector<double> all_gather_exposed_us;
};

// How every output names a unit: its fqn, "(root)" for the root module itself.
inline std::string unit_name(const FsdpUnitStats& u) { return u.fqn.empty() ? "(root)" : u.fqn; }

struct FsdpRootStats {
  int root = 0;  // the root's unit number
  std::string module;
  int world_size = 0;  // the all-gather group's size
  int replicas = 0;    // HSDP: the replicate group's size; 0 without
  // All-gathers and reduce-scatters on one communicator (NCCL runs them one
  // after another there), and whether any two of them ran at once.
  bool shared_comm = false;
  bool overlapped = false;
  std::vector<FsdpUnitStats> units;
};

// Of several roots, " of root N" (a root numbered by its first unit) after
// a unit's name, so that same-named units of two roots stay apart; else "".
inline std::string of_root(int root, size_t roots) {
  return roots > 1 ? " of root " + std::to_string(root) : "";
}
inline std::string of_root(const FsdpRootStats& root, size_t roots) {
  return of_root(root.root, roots);
}

}  // namespace ddpscope::analysis
