// DDP's bucket assignment, reproduced: gradients in ready order fill buckets
// per dtype; a bucket closes once it reaches its size limit (the first bucket's
// limit is first_bucket_bytes, later ones cap_bytes), so it may overshoot by
// one tensor; parameters are never split. The bucket order is the order DDP
// reduces them in (the order torch's _compute_bucket_assignment_by_size returns).
// A workload recorded from DDP's own account (Workload::ddp) is planned as that
// DDP would lay it out if the job passed bucket_cap_mb=bucket_mb: its torch's
// first-bucket rule, and its constructor's layout where it never rebuilds.
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

// The first bucket's limit DDP uses for `w` at bucket_mb: bucket_mb itself
// where w's torch caps the first bucket with an explicit bucket_cap_mb
// (DdpBucketing::first_bucket_follows_cap), else first_bucket_mb.
double first_bucket_mb_for(const Workload& w, double bucket_mb, double first_bucket_mb);

// bucket_mb and first_bucket_mb in MiB (as DDP's bucket_cap_mb: MB = 2^20
// bytes); the plan's first_bucket_mb is the limit used (first_bucket_mb_for).
BucketPlan plan_buckets(const Workload& w, double bucket_mb, double first_bucket_mb = 1.0);

// When each bucket's all-reduce goes in DDP's backward, shared by the replay
// engine and the cost model. Gradients become ready in `order` (the workload's
// ready_order, or reverse parameter order: autograd's usual order); bucket k is
// launched after the ready step of its last gradient, but never before bucket
// k-1 (DDP's reducer launches strictly in bucket order): a running maximum.
struct LaunchSchedule {
  std::vector<size_t> order;      // parameter indices in ready order
  std::vector<long> bucket_step;  // per bucket: its launch step; -1 before backward
};

// Throws std::invalid_argument for a ready_order naming a parameter that does
// not exist, or a bucket holding a parameter that never becomes ready.
LaunchSchedule launch_schedule(const Workload& w, const BucketPlan& plan);

}  // namespace ddpscope::tuner
