// A GPU-like DDP run for tests without a GPU: what the injector would record
// with CUPTI on a data-parallel job, written through the store's own rank
// writer and merge. Each rank runs iterations of a host-to-device copy, the
// forward pass (compute kernels on the compute stream), the backward pass
// whose buckets' all-reduce kernels run on the NCCL stream while the rest of
// the backward computes (NCCL kernels queue on their stream), the optimizer
// after the last bucket, and a memset (zero_grad). Kernel times have
// nanosecond jitter from a fixed seed. The communication of rank r is
// `comm_scale[r]` times a base length, so ranks hide different shares of it
// behind compute (about 20 %, 86 %, 40 % and 71 % by default).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ddpscope::testing {

struct GpuRunSpec {
  std::vector<double> comm_scale = {10.0, 1.0, 5.0, 2.8};  // one per rank
  int iterations = 8;
  uint32_t seed = 7;
};

struct GpuRun {
  std::string path;                   // the merged run.db
  std::vector<int64_t> kernels;       // kernel rows per rank (copies and sets included)
  std::vector<int64_t> comm_kernels;  // of which NCCL kernels
  int iterations = 0;                 // per rank
};

// Writes DIR/rank-<r>.db for each rank and merges them into DIR/run.db.
GpuRun make_gpu_run(const std::string& dir, const GpuRunSpec& spec = {});

}  // namespace ddpscope::testing
