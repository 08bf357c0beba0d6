// Measuring a calibration on this machine with a real backend, through the
// same launcher and ranks as a measured sweep (tuner/sweep_launch.h):
// synthetic workloads whose replays isolate what the cost model needs.
#pragma once

#include <string>

#include "tuner/model/calibration.h"
#include "tuner/sweep_launch.h"
#include "tuner/topology.h"

namespace ddpscope::tuner {

// What is measured. The defaults are what `tune --calibrate` measures; a
// test may ask for less.
struct CalibrationPlan {
  // Sizes (MiB) for the fit: gradients of 256 KiB, 64 MiB in all
  // (fit_params), so every cap from 1/4 MiB up gives buckets of that size, up
  // to the largest a sweep usually tries (large buffers fall out of cache:
  // they must be in the fit). In doublings: the per-size ratios
  // (size_correction.h) are interpolated between neighbours, and the
  // crossover of steps and bytes is narrow.
  std::string fit_sizes_mb = "0.25,0.5,1,2,4,8,16,32,64";
  int fit_params = 256;
  // Across a shaped inter-node link the wire, not the cache, sets the time:
  // 16 MiB at most keeps the fit short on a slow link (1/4 s at 1 Gbit/s).
  std::string inter_fit_sizes_mb = "0.25,0.5,1,2,4,8,16";
  int inter_fit_params = 64;
  // The fits this machine's CPUs pace (one node: the topology's ranks and
  // two; the nodes unshaped) in this many passes, their iterations pooled
  // per size (calibrate.cpp, fit_links).
  int cpu_paced_passes = 3;
  int fit_iterations = 12;    // per size and pass, whatever the sweep's --iters
  int probe_iterations = 24;  // short iterations: many, for a steady median
};

// 1. Back-to-back all-reduces at the plan's sizes, no compute: the fit of α
//    and β (a ring folds γ into β).
// 2. Short compute steps and one tiny bucket, alone and beside an 8 MiB
//    all-reduce: how late a step ends on the slowest rank (the step delay),
//    and how much later while communication runs.
// The communication rate under compute follows from ranks and cores.
// Runs on `s.nproc` ranks of `backend` on `topology` (s.topology, parsed);
// std::runtime_error if the ranks fail, std::invalid_argument if the fit is
// impossible.
model::Calibration measure_calibration(const SweepSpec& s, const std::string& backend,
                                       const Topology& topology, const WorkerProgram& program,
                                       const CalibrationPlan& plan = {});

}  // namespace ddpscope::tuner
