// Measuring a sweep on real ranks. The coordinator (a `ddpscope tune`, or any
// C++ caller) starts `nproc` ranks of a worker program per backend, directly
// for gloo and nccl, under mpirun for mpi (with its ring forced), optionally
// inside an emulated topology, and reads the summary rank 0 writes
// (tuner/rank_protocol.h). Under an existing launcher (mpirun, srun,
// torchrun) every process runs as a rank itself: run_as_rank.
#pragma once

#include <string>
#include <vector>

#include "tuner/sweep.h"
#include "tuner/sweep_spec.h"

namespace ddpscope::tuner {

// The program each rank runs: its argv up to the sweep's arguments, which
// worker_arguments appends. `ddpscope tune --worker` is one; any program
// that hands its arguments to parse_worker_arguments and run_as_rank is another.
struct WorkerProgram {
  std::vector<std::string> argv;
};

// The arguments one rank of `backend` needs: --backend, --workload,
// --bucket-mb, --first-bucket-mb, --iters, --warmup, --results-dir.
std::vector<std::string> worker_arguments(const SweepSpec& s, const std::string& backend);
// The inverse, for worker programs without a flag parser of their own;
// InputError on anything else.
SweepSpec parse_worker_arguments(const std::vector<std::string>& args);

// Runs every measured backend of `s` on s.nproc local ranks and returns their
// results; std::runtime_error when a backend's ranks fail,
// emulation::EmulationUnavailable when s.topology cannot be emulated here.
std::vector<SettingResult> measure_sweep(SweepSpec s, const WorkerProgram& program);

// This process as one rank of every measured backend of `s` in turn.
struct RankOutcome {
  int status = 0;     // the process exit status
  bool rank0 = true;  // only rank 0 has results
  std::vector<SettingResult> results;
};
RankOutcome run_as_rank(SweepSpec s, const Workload& w);

}  // namespace ddpscope::tuner
