// One rank's part of the analysis: its DDP all-reduces split into iterations,
// the compute it could hide communication behind, and the figures per
// iteration and per bucket that follow.
#pragma once

#include <future>
#include <map>
#include <vector>

#include "profiler/analysis/intervals.h"
#include "profiler/analysis/iterations.h"
#include "profiler/analysis/nccl_choices.h"
#include "profiler/analysis/run_analysis.h"
#include "profiler/store/reader.h"

namespace ddpscope::analysis {

// Another DDP instance's buckets on the same rank (a GAN's discriminator).
struct InstanceCalls {
  int instance = 0;
  std::vector<Call> ddp;
  IterationSplit split;
};

struct RankView {
  int rank = 0;
  // The primary DDP instance's bucket all-reduces (the one with the most bucket
  // bytes), in backward-pass then seq order; without DDP's own account, every
  // all-reduce on the busiest communicator, seq order.
  std::vector<Call> ddp;
  IterationSplit split;
  std::vector<InstanceCalls> others;
  bool from_account = false;      // ddp and split come from DDP's own account
  std::vector<Interval> compute;  // union of compute intervals
  bool compute_from_kernels = false;
  // Without DDP iterations, FSDP's steps are the rank's (fsdp_units.h).
  std::vector<IterationStats> fsdp_steps;
  // Over its steady FSDP steps (with or without DDP's iterations beside them).
  double fsdp_comm_ms_median = 0, fsdp_exposed_ms_median = 0;
};

// Every rank's compute and communication kernels (as stored, not yet
// unioned), four columns in one pass over the table through the reader's
// filter: a per-rank indexed query would seek row by row through millions,
// and a pass per kind reads every row twice.
struct KernelIntervals {
  std::map<int, std::vector<Interval>> compute, comm;
};
KernelIntervals kernel_intervals(store::RunReader& reader);
// The same, with the compute kernels unioned, read beside the analysis
// (which reads the collectives meanwhile): the table split by rowid among
// readers on threads of their own, each through a connection of its own
// (the reader's file and filter).
std::future<KernelIntervals> kernel_intervals_beside(const store::RunReader& reader);
// Rank files read together (reader.parts()): every file's collectives, in
// the merge's order, and its kernels as above, each file read whole on its
// own connection by one of the threads that share the files out (a file
// opened, checked and placed once is the most of the cost at 1,024 files).
struct FilesRead {
  CollectiveRuns collectives;  // thread by thread, each its files' in order
  KernelIntervals kernels;
};
FilesRead read_files(store::RunReader& reader);

// On CPU there are no kernels: backward is taken to run from an iteration's
// first bucket launch to its last bucket launch (after that nothing is left to
// hide communication behind).
std::vector<Interval> backward_windows(const RankView& v);

std::vector<IterationStats> iteration_stats(const RankView& v);

// Per bucket index over the steady iterations of every rank; with NCCL's
// choices (nccl_choices.h), the one it made most often for each bucket.
std::vector<BucketStats> bucket_stats(const std::vector<RankView>& views,
                                      const NcclChoices& choices);

}  // namespace ddpscope::analysis
