// DDP's bucket assignment: torch's compute_bucket_assignment_by_size
// (torch/csrc/distributed/c10d/reducer.cpp), as DDP's rebuild_buckets() calls it
// after the first iteration: tensors in gradient-ready order, bucket limits
// [first_bucket_bytes, cap_bytes], tensor_indices = the ready order (so no sort);
// or, for a DDP that never rebuilds, as its constructor calls it (module order,
// sorted, reversed). tests/tuner/test_bucketizer_vs_torch.py checks both
// against torch itself.
#include "tuner/bucket_plan.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>
#include <stdexcept>
#include <string>

namespace ddpscope::tuner {
namespace {

// c10::ScalarType's value for each dtype; hashing it is what orders the
// leftover buckets. Types torch 1.13 lacks take their later torch values
// (Bits8/16, Float8_e5m2/e4m3fn, UInt32/64); bits32/bits64 have no torch type
// and get codes of their own.
int torch_scalar_type(Dtype dtype) {
  // In Dtype's order: unknown (never planned: validate() refuses it), int8,
  // uint8, int32, uint32, int64, uint64, float16, float32, float64, bfloat16,
  // fp8e4m3, fp8e5m2, bits8, bits16, bits32, bits64.
  static constexpr int kCodes[] = {127, 1, 0, 3, 28, 4, 29, 5, 6, 7, 15, 24, 23, 21, 22, 64, 65};
  static_assert(std::size(kCodes) == size_t(Dtype::kCount));
  return kCodes[size_t(dtype)];
}

// c10::hash<BucketKey> = c10::get_hash(type, device) = hash_combine(hash(device),
// hash(type)), Boost's hash_combine, for a CPU tensor: std::hash<c10::Device> is
// (uint8(type) << 16 | uint8(index)) = 0 << 16 | uint8(-1) = 255. For the float
// dtypes gradients have, cuda:0 and meta tensors give the same final order
// (their four keys also land in distinct buckets; see docs/tuner.md).
uint64_t bucket_key_hash(Dtype dtype) {
  const uint64_t seed = 255;
  const uint64_t value = static_cast<uint64_t>(torch_scalar_type(dtype));
  return seed ^ (value + 0x9e3779b9 + (seed << 6) + (seed >> 2));
}

// libstdc++'s _Prime_rehash_policy at load factor 1: the first insertion
// allocates _M_next_bkt(11 + 1) = 13 buckets; the 14th key grows the table to
// the first prime >= 2 * 13, 29, which Dtype's 16 sized values never outgrow.
size_t bucket_count_for(size_t keys) { return keys <= 13 ? 13 : 29; }

// libstdc++ keeps one singly linked list with each bucket's nodes adjacent; a
// key whose bucket is empty goes to the front of the list, otherwise it goes
// right before the first node of its bucket. Rehashing re-inserts the nodes in
// list order by the same rule.
void insert_like_libstdcxx(std::vector<Dtype>& list, Dtype key, size_t buckets) {
  const uint64_t bucket = bucket_key_hash(key) % buckets;
  auto it = list.begin();
  while (it != list.end() && bucket_key_hash(*it) % buckets != bucket) ++it;
  list.insert(it == list.end() ? list.begin() : it, key);
}

// The iteration order of torch's std::unordered_map<BucketKey, ...> after
// operator[] inserted the keys in `first_seen` order (keys are never erased).
std::vector<Dtype> unordered_map_order(const std::vector<Dtype>& first_seen) {
  std::vector<Dtype> list;
  size_t buckets = 0;
  for (Dtype key : first_seen) {
    const size_t wanted = bucket_count_for(list.size() + 1);
    if (wanted != buckets) {
      std::vector<Dtype> old;
      old.swap(list);
      for (Dtype k : old) insert_like_libstdcxx(list, k, wanted);
      buckets = wanted;
    }
    insert_like_libstdcxx(list, key, buckets);
  }
  return list;
}

// DDP: int(bucket_cap_mb * 1024 * 1024), truncating.
uint64_t mib_to_bytes(double mb, const char* what) {
  if (!std::isfinite(mb) || mb < 0)
    throw std::invalid_argument(std::string(what) + " must be a non-negative number of MiB");
  const double bytes = mb * 1024 * 1024;
  return bytes >= 18446744073709551615.0 ? UINT64_MAX : static_cast<uint64_t>(bytes);
}

// One dtype's accumulating bucket and the index of its current size limit.
struct OpenBucket {
  Bucket bucket;
  size_t limit = 0;
  bool seen = false;
};

// torch's compute_bucket_assignment_by_size over tensors in `order`: the
// buckets in the order they closed, then the leftovers in hash-map order.
std::vector<Bucket> assign_by_size(const Workload& w, const std::vector<size_t>& order,
                                   const std::array<uint64_t, 2>& limits) {
  std::vector<Bucket> buckets;
  std::array<OpenBucket, size_t(Dtype::kCount)> open;
  std::vector<Dtype> first_seen;
  for (size_t index : order) {
    const Param& p = w.params[index];
    OpenBucket& o = open[size_t(p.dtype)];
    if (!o.seen) {
      o.seen = true;
      o.bucket.dtype = p.dtype;
      first_seen.push_back(p.dtype);
    }
    o.bucket.params.push_back(index);
    o.bucket.bytes += p.bytes();
    // Closed once it reaches the limit, so a bucket overshoots by its last tensor.
    if (o.bucket.bytes >= limits[o.limit]) {
      buckets.push_back(std::move(o.bucket));
      o.bucket = Bucket{};
      o.bucket.dtype = p.dtype;
      o.limit = limits.size() - 1;
    }
  }
  // What is left, in the order torch's hash map iterates its per-dtype buckets.
  for (Dtype dtype : unordered_map_order(first_seen)) {
    Bucket& rest = open[size_t(dtype)].bucket;
    if (!rest.params.empty()) buckets.push_back(std::move(rest));
  }
  return buckets;
}

// DDP's constructor: parameters in module order, no tensor_indices, so torch
// sorts the buckets by their lowest parameter index; DDP then reverses the
// list, approximating the order gradients become ready (the last layer's first).
std::vector<Bucket> constructor_layout(const Workload& w, const std::array<uint64_t, 2>& limits) {
  std::vector<size_t> module_order(w.params.size());
  for (size_t i = 0; i < module_order.size(); ++i) module_order[i] = i;
  auto buckets = assign_by_size(w, module_order, limits);
  // Filled in ascending order, so a bucket's first index is its lowest.
  std::sort(buckets.begin(), buckets.end(),
            [](const Bucket& a, const Bucket& b) { return a.params.front() < b.params.front(); });
  std::reverse(buckets.begin(), buckets.end());
  return buckets;
}

}  // namespace

double first_bucket_mb_for(const Workload& w, double bucket_mb, double first_bucket_mb) {
  return w.ddp && w.ddp->first_bucket_follows_cap ? bucket_mb : first_bucket_mb;
}

BucketPlan plan_buckets(const Workload& w, double bucket_mb, double first_bucket_mb) {
  validate(w, "workload '" + w.name + "'");
  BucketPlan plan;
  plan.bucket_mb = bucket_mb;
  plan.first_bucket_mb = first_bucket_mb_for(w, bucket_mb, first_bucket_mb);
  const std::array<uint64_t, 2> limits = {mib_to_bytes(plan.first_bucket_mb, "first_bucket_mb"),
                                          mib_to_bytes(bucket_mb, "bucket_mb")};
  // DDP's rebuild_buckets() assigns in gradient-ready order and keeps that order.
  plan.buckets = w.ddp && !w.ddp->rebuilds ? constructor_layout(w, limits)
                                           : assign_by_size(w, w.ready_order, limits);
  return plan;
}

LaunchSchedule launch_schedule(const Workload& w, const BucketPlan& plan) {
  LaunchSchedule s;
  s.order = w.ready_order;
  if (s.order.empty())
    for (size_t i = w.params.size(); i-- > 0;) s.order.push_back(i);
  std::vector<long> position(w.params.size(), -1);
  for (size_t i = 0; i < s.order.size(); ++i) {
    if (s.order[i] >= w.params.size())
      throw std::invalid_argument("ready_order names parameter " + std::to_string(s.order[i]) +
                                  " of " + std::to_string(w.params.size()));
    position[s.order[i]] = long(i);
  }
  long step = -1;
  for (size_t k = 0; k < plan.buckets.size(); ++k) {
    for (size_t p : plan.buckets[k].params) {
      if (p >= position.size() || position[p] < 0)
        throw std::invalid_argument("bucket " + std::to_string(k) + " holds parameter " +
                                    std::to_string(p) + ", which never becomes ready");
      step = std::max(step, position[p]);
    }
    s.bucket_step.push_back(step);
  }
  return s;
}

}  // namespace ddpscope::tuner
