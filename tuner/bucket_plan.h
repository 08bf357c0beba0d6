// DDP's bucket assignment, reproduced: gradients in ready order fill buckets
// per dtype; a bucket closes once it reaches its size limit (the first bucket's
// limit is first_bucket_bytes, later ones cap_bytes), so it may overshoot by
// one tensor; parameters are never split. The bucket order is the order DDP
// reduces them in (the order torch's _compute_bucket_assignment_by_size returns).
#pragma once

#include <cstdint>
#include <vector>

#include "tuner/workload.h"

namespace ddpscope::tuner {

struct Bucket {
  uint64_t bytes = 0;
  Dtype dtype = Dtype::float32;
  std::vector<size_t> params;  // indices into Workload::params, in ready order
};

struct BucketPlan {
  double bucket_mb = 25;
  double first_bucket_mb = 1;
  std::vector<Bucket> buckets;  // DDP reduction order
};

// bucket_mb and first_bucket_mb in MiB (as DDP's bucket_cap_mb: MB = 2^20 bytes).
BucketPlan plan_buckets(const Workload& w, double bucket_mb, double first_bucket_mb = 1.0);

}  // namespace ddpscope::tuner
