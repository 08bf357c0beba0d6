// NCCL's side of the profiler plugin, as the test double plays it: when
// NCCL_PROFILER_PLUGIN names a library, load it the way NCCL (>= 2.23) does
// (dlopen the name, else libnccl-profiler-<name>.so; look up ncclProfiler_v6,
// then _v5, then _v4), call its init per communicator rank, and hand it
// NCCL-shaped events for every collective launched: the collective with an
// algorithm, protocol and channel count chosen by size, then, once the data
// moved, each channel's kernel start/stop on a GPU-like timer and its proxy
// send/receive operations with their steps. With v6 and
// DDPSCOPE_TESTNCCL_CE_ALLGATHER=1, all-gathers run "on the copy engines" as
// NCCL >= 2.29 runs them over symmetric memory: a ceColl with its syncs and
// copy batch, no kernel channels or proxy operations, no seqNumber. Like NCCL, a group's
// collectives are launched in another order than they were called (NCCL sorts a group's tasks), and
// a one-rank communicator shows the plugin nothing (NCCL's one-rank short-cut).
#pragma once

#include <vector>

#include "op.h"

namespace ddpscope::testnccl {

// Calls the plugin's init for this rank's handle (at most once per handle).
void profiler_comm_init(ncclComm* c);
// Calls the plugin's finalize for it.
void profiler_comm_end(ncclComm* c);

// A launched collective, until its data moved.
struct ProfiledLaunch {
  ncclComm* comm = nullptr;
  void* coll = nullptr;  // the plugin's handle (stopped at launch, as NCCL does)
  int nchannels = 0;
  size_t bytes = 0;
  unsigned long long gpu_start = 0;
};

// Starts and stops the collective events of `reqs` (one launch; a group's
// calls in NCCL's order, not the caller's). Requests that are no collective
// in NCCL's sense (p2p, split, one rank) give no launch.
std::vector<ProfiledLaunch> profiler_launch(const std::vector<Request>& reqs);
// After the data moved: kernel channels and proxy operations.
void profiler_complete(const std::vector<ProfiledLaunch>& launches);

}  // namespace ddpscope::testnccl
