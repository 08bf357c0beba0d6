// DDP's bucket assignment on hand-made cases; test_bucketizer_vs_torch.py
// checks random ones against torch itself.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <stdexcept>
#include <unordered_map>

#include "tests/tuner/plan_indices.h"
#include "tuner/bucket_plan.h"

using namespace ddpscope;
using namespace ddpscope::tuner;
using namespace ddpscope::testing;

namespace {

Workload make(const std::vector<std::pair<uint64_t, Dtype>>& params,
              std::vector<size_t> ready_order) {
  Workload w;
  w.name = "hand-made";
  for (const auto& [numel, dtype] : params)
    w.params.push_back({"p" + std::to_string(w.params.size()), numel, dtype, 1});
  w.ready_order = std::move(ready_order);
  return w;
}

// Limits in bytes, as torch takes them.
Plan plan_bytes(const Workload& w, uint64_t cap, uint64_t first) {
  return indices(plan_buckets(w, cap / kMiB, first / kMiB));
}

}  // namespace

TEST_CASE("the two cases observed from torch's own function") {
  // f32 40 B, f16 600 KB, f32 800 KB, f16 10 B in ready order 0..3, limits [1 MiB, 2 MiB].
  const Workload a = make({{10, Dtype::float32},
                           {300 * 1024, Dtype::float16},
                           {200 * 1024, Dtype::float32},
                           {5, Dtype::float16}},
                          {0, 1, 2, 3});
  CHECK(indices(plan_buckets(a, 2, 1)) == Plan{{1, 3}, {0, 2}});
  // The same tensors passed with tensor_indices [3, 2, 1, 0], limits [100, 1000].
  const Workload b = make({{5, Dtype::float16},
                           {200 * 1024, Dtype::float32},
                           {300 * 1024, Dtype::float16},
                           {10, Dtype::float32}},
                          {3, 2, 1, 0});
  CHECK(plan_bytes(b, 1000, 100) == Plan{{2}, {3, 1}, {0}});
}

TEST_CASE("a bucket closes once it reaches its limit, overshooting by one tensor") {
  // 400 B each; first limit 500 B, then 1000 B.
  const Workload w = make(std::vector<std::pair<uint64_t, Dtype>>(7, {100, Dtype::float32}),
                          {6, 5, 4, 3, 2, 1, 0});
  const BucketPlan plan = plan_buckets(w, 1000 / kMiB, 500 / kMiB);
  CHECK(indices(plan) == Plan{{6, 5}, {4, 3, 2}, {1, 0}});
  CHECK(plan.buckets[0].bytes == 800);
  CHECK(plan.buckets[1].bytes == 1200);
  CHECK(plan.buckets[2].bytes == 800);  // the leftover, below its limit
  CHECK(plan.buckets[2].dtype == Dtype::float32);
  CHECK(plan.bucket_mb == 1000 / kMiB);
  CHECK(plan.first_bucket_mb == 500 / kMiB);
  // Exactly at the limit closes too.
  CHECK(plan_bytes(w, 800, 400) == Plan{{6}, {5, 4}, {3, 2}, {1, 0}});
}

TEST_CASE("caps below the largest tensor give it a bucket of its own") {
  const Workload w = make({{1, Dtype::float32},
                           {1'000'000, Dtype::float32},
                           {2, Dtype::float32},
                           {3'000'000, Dtype::float32},
                           {1, Dtype::float32}},
                          {4, 3, 2, 1, 0});
  CHECK(indices(plan_buckets(w, 1, 1)) == Plan{{4, 3}, {2, 1}, {0}});
  CHECK(plan_bytes(w, 0, 0) == Plan{{4}, {3}, {2}, {1}, {0}});
  CHECK(indices(plan_buckets(w, 25, 25)) == Plan{{4, 3, 2, 1, 0}});
}

TEST_CASE("each dtype keeps its own first-bucket limit") {
  // 1 KiB tensors: float32 and float16 alternate in ready order.
  const Workload w = make({{256, Dtype::float32},
                           {512, Dtype::float16},
                           {256, Dtype::float32},
                           {512, Dtype::float16},
                           {256, Dtype::float32},
                           {512, Dtype::float16}},
                          {0, 1, 2, 3, 4, 5});
  // First limit 1 KiB per dtype, then 2 KiB.
  CHECK(plan_bytes(w, 2048, 1024) == Plan{{0}, {1}, {2, 4}, {3, 5}});
  // A huge first bucket: both dtypes stay open; leftovers go float16, float32
  // (torch's hash map order: the reverse of first appearance, for two keys).
  CHECK(plan_bytes(w, 1024, 1 << 30) == Plan{{1, 3, 5}, {0, 2, 4}});
  const BucketPlan plan = plan_buckets(w, 1024 / kMiB, 1 << 10);
  CHECK(plan.buckets[0].dtype == Dtype::float16);
  CHECK(plan.buckets[0].bytes == 3 * 1024);
}

TEST_CASE("leftovers of the four float dtypes come in reverse order of first appearance") {
  const Dtype floats[] = {Dtype::float32, Dtype::float16, Dtype::bfloat16, Dtype::float64};
  std::vector<size_t> perm = {0, 1, 2, 3};
  do {
    std::vector<std::pair<uint64_t, Dtype>> params;
    for (size_t k : perm) params.push_back({1, floats[k]});
    const BucketPlan plan = plan_buckets(make(params, {0, 1, 2, 3}), 25, 1);
    CHECK(indices(plan) == Plan{{3}, {2}, {1}, {0}});
  } while (std::next_permutation(perm.begin(), perm.end()));
}

TEST_CASE("bad bucket sizes are refused") {
  const Workload w = make({{1, Dtype::float32}}, {0});
  CHECK_THROWS_AS(plan_buckets(w, -1, 1), std::invalid_argument);
  CHECK_THROWS_AS(plan_buckets(w, 25, std::nan("")), std::invalid_argument);
  CHECK_THROWS_AS(plan_buckets(make({{1, Dtype::float32}}, {}), 25, 1), InputError);
  CHECK(indices(plan_buckets(w, 1e300, 1e300)) == Plan{{0}});
}

#ifdef __GLIBCXX__
// The leftover order models libstdc++'s std::unordered_map with c10's hash of
// (ScalarType, CPU device); here the real container decides, for all sixteen
// sized dtypes in random first-appearance orders (14+ keys rehash to 29 buckets).
namespace {

struct TorchKeyHash {
  size_t operator()(int scalar_type) const {
    const size_t seed = 255;  // std::hash<c10::Device> of the CPU
    return seed ^ (size_t(scalar_type) + 0x9e3779b9 + (seed << 6) + (seed >> 2));
  }
};

int scalar_type(Dtype d) {
  static const std::unordered_map<Dtype, int> codes = {
      {Dtype::uint8, 0},   {Dtype::int8, 1},    {Dtype::int32, 3},    {Dtype::int64, 4},
      {Dtype::float16, 5}, {Dtype::float32, 6}, {Dtype::float64, 7},  {Dtype::bfloat16, 15},
      {Dtype::bits8, 21},  {Dtype::bits16, 22}, {Dtype::fp8e5m2, 23}, {Dtype::fp8e4m3, 24},
      {Dtype::uint32, 28}, {Dtype::uint64, 29}, {Dtype::bits32, 64},  {Dtype::bits64, 65}};
  return codes.at(d);
}

}  // namespace

TEST_CASE("the leftover order is libstdc++'s unordered_map order") {
  std::vector<Dtype> all;
  for (int d = 1; d < int(Dtype::kCount); ++d) all.push_back(Dtype(d));
  std::mt19937 rng(7);
  for (int round = 0; round < 500; ++round) {
    std::shuffle(all.begin(), all.end(), rng);
    const size_t keys = 1 + rng() % all.size();
    std::vector<std::pair<uint64_t, Dtype>> params;
    std::vector<size_t> order;
    std::unordered_map<int, Dtype, TorchKeyHash> torch_map;
    for (size_t k = 0; k < keys; ++k) {
      params.push_back({1, all[k]});
      order.push_back(k);
      torch_map[scalar_type(all[k])] = all[k];
    }
    std::vector<Dtype> expected, got;
    for (const auto& [code, dtype] : torch_map) expected.push_back(dtype);
    for (const Bucket& b : plan_buckets(make(params, order), 25, 1).buckets) got.push_back(b.dtype);
    REQUIRE(got == expected);
  }
}
#endif
