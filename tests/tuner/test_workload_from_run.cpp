// Workloads from recorded runs: with DDP's own account (ddp_info) the tuner
// replays the reducer's real parameters and re-buckets them as that DDP
// would (its torch's first-bucket rule, its constructor's layout where it
// never rebuilds); without one it falls back to the all-reduce pattern.
// The runs are rank files written here; the accounts' values follow what a
// 1-process gloo DDP prints (_get_ddp_logging_data) on torch 2.x and 1.13.
#include <catch2/catch.hpp>
#include <map>

#include "profiler/store/writer.h"
#include "tests/support/subprocess.h"
#include "tests/tuner/plan_indices.h"
#include "tuner/bucket_plan.h"
#include "tuner/sweep_spec.h"
#include "tuner/workload_from_run.h"

using namespace ddpscope;
using namespace ddpscope::tuner;
using namespace ddpscope::testing;

namespace {

using Keys = std::map<std::string, std::string>;

// Six float32 parameters in module order (three Linear layers, weight and bias).
const char* kParamBytes = "4096000 64000 8192000 128000 2048000 32000";
const char* kDtypes = "float32 float32 float32 float32 float32 float32";

// torch 2.x, bucket_cap_mb given (10 MB cap; the first bucket follows it):
// ready order 5..0 closes [5 4 3 2] at 10.4 MB, leaving [1 0].
Keys torch2_account() {
  return {{"torch_version", "2.15.0"},
          {"bucket_cap_bytes", "10000000"},
          {"first_bucket_bytes", "10000000"},
          {"explicit_cap_sets_first_bucket", "1"},
          {"find_unused_parameters", "0"},
          {"static_graph", "0"},
          {"param_bytes", kParamBytes},
          {"param_dtypes", kDtypes},
          {"bucket_sizes", "14560000"},
          {"rebuilt_bucket_sizes", "10400000 4160000"},
          {"rebuilt_per_bucket_param_indices", "5 4 3 2, 1 0"}};
}

// torch 1.13, the same cap: the first bucket stays 1 MiB.
Keys torch1_account() {
  Keys k = torch2_account();
  k["torch_version"] = "1.13.0a0";
  k["first_bucket_bytes"] = "1048576";
  k["explicit_cap_sets_first_bucket"] = "0";
  k["rebuilt_bucket_sizes"] = "2080000 12480000";
  k["rebuilt_per_bucket_param_indices"] = "5 4, 3 2 1 0";
  return k;
}

// find_unused_parameters: the constructor's layout, never rebuilt: filled in
// module order ([0 1 2] at 12.35 MB, [3 4 5]), then reversed.
Keys unused_account() {
  Keys k = torch2_account();
  k["find_unused_parameters"] = "1";
  k["bucket_sizes"] = "2208000 12352000";
  k.erase("rebuilt_bucket_sizes");
  k.erase("rebuilt_per_bucket_param_indices");
  return k;
}

struct Account {
  int rank = 0;
  int instance = 0;
  Keys keys;
};

// One rank's DDP stream: a warm-up iteration of one bucket, then `iters`
// iterations of `buckets` whose launches are `gap_us` apart, 20 ms apart.
void write_collectives(store::RankWriter& w, const std::vector<uint64_t>& buckets,
                       const std::vector<int64_t>& gap_us, int iters) {
  uint64_t seq = 0, total = 0;
  int64_t t = 1'000'000;
  for (uint64_t b : buckets) total += b;
  auto add = [&](uint64_t bytes) {
    CollectiveRecord c;
    c.comm_id = 7;
    c.comm_rank = 0;
    c.nranks = 2;
    c.seq = seq++;
    c.op = Op::allreduce;
    c.dtype = Dtype::float32;
    c.count = bytes / 4;
    c.bytes = bytes;
    c.host_start_ns = c.start_ns = t;
    c.host_end_ns = c.end_ns = t + 100'000;
    c.timing = Timing::host;
    w.add(c);
  };
  add(total);
  for (int i = 0; i < iters; ++i) {
    t += 20'000'000;
    for (size_t k = 0; k < buckets.size(); ++k) {
      t += k ? gap_us[k] * 1000 : 0;
      add(buckets[k]);
    }
  }
}

std::string write_run(const std::string& name, const std::vector<uint64_t>& buckets,
                      const std::vector<Account>& accounts) {
  const std::string path = testing::temp_dir("workload-from-run-" + name) + "/rank-0.db";
  store::RankWriter w(path, {{"kind", "rank"}, {"timeline", "monotonic"}});
  w.begin();
  ProcessRecord p;
  p.world_size = 2;
  p.backend = ddpscope::Backend::gloo;
  w.put(p);
  std::vector<int64_t> gaps(buckets.size(), 0);
  for (size_t k = 1; k < gaps.size(); ++k) gaps[k] = 400 + 200 * int64_t(k);
  write_collectives(w, buckets, gaps, 8);
  int64_t t = 1;
  for (const auto& a : accounts)
    for (const auto& [key, value] : a.keys)
      w.add(DdpInfoRecord{a.rank, a.instance, key, value, t++});
  w.commit();
  w.close();
  return path;
}

const double kCap = 2'100'000 / kMiB;  // between the recorded buckets' sizes

}  // namespace

TEST_CASE("torch 2.x: DDP's own parameters, ready order and first bucket = bucket_cap_mb") {
  const auto path = write_run("torch2", {10400000, 4160000}, {{0, 0, torch2_account()}});
  const Workload w = workload_from_run(path);
  REQUIRE(w.params.size() == 6);
  CHECK(w.params[2].numel == 8192000 / 4);
  CHECK(w.ready_order == std::vector<size_t>{5, 4, 3, 2, 1, 0});
  REQUIRE(w.ddp);
  CHECK(w.ddp->first_bucket_follows_cap);
  CHECK(w.ddp->rebuilds);
  CHECK_THAT(w.source, Catch::StartsWith("DDP's own layout (instance 0, torch 2.15.0"));
  // The recorded cap gives the recorded buckets; another cap caps the first too.
  CHECK(indices(plan_buckets(w, 10'000'000 / kMiB)) == Plan{{5, 4, 3, 2}, {1, 0}});
  const BucketPlan plan = plan_buckets(w, kCap);
  CHECK(indices(plan) == Plan{{5, 4, 3}, {2}, {1, 0}});
  CHECK(plan.first_bucket_mb == kCap);
}

TEST_CASE("torch 1.13: the first bucket stays dist._DEFAULT_FIRST_BUCKET_BYTES") {
  const auto path = write_run("torch1", {2080000, 12480000}, {{0, 0, torch1_account()}});
  const Workload w = workload_from_run(path);
  REQUIRE(w.ddp);
  CHECK_FALSE(w.ddp->first_bucket_follows_cap);
  CHECK(indices(plan_buckets(w, 10'000'000 / kMiB)) == Plan{{5, 4}, {3, 2, 1, 0}});
  const BucketPlan plan = plan_buckets(w, kCap);
  CHECK(indices(plan) == Plan{{5, 4}, {3, 2}, {1, 0}});
  CHECK(plan.first_bucket_mb == 1);
}

TEST_CASE("find_unused_parameters: the constructor's layout, filled in module order, reversed") {
  const auto path = write_run("unused", {2208000, 12352000}, {{0, 0, unused_account()}});
  const Workload w = workload_from_run(path);
  REQUIRE(w.ddp);
  CHECK_FALSE(w.ddp->rebuilds);
  CHECK(w.ready_order == std::vector<size_t>{5, 4, 3, 2, 1, 0});
  CHECK(indices(plan_buckets(w, 10'000'000 / kMiB)) == Plan{{3, 4, 5}, {0, 1, 2}});
  // Filling backward from the last layer (a rebuild) would give {5 4 3} {2} {1 0}.
  CHECK(indices(plan_buckets(w, kCap)) == Plan{{5}, {3, 4}, {1, 2}, {0}});
  CHECK(w.source.find("never rebuilt") != std::string::npos);
}

TEST_CASE("backward time: each bucket's measured gap split over its parameters by bytes") {
  const auto path = write_run("times", {10400000, 4160000}, {{0, 0, torch2_account()}});
  const Workload w = workload_from_run(path);
  // Bucket 1 ([1 0]) launched 600 us after bucket 0; bucket 0's time is forward's.
  CHECK(w.params[1].backward_us == Approx(600.0 * 64000 / 4160000).margin(1));
  CHECK(w.params[0].backward_us == Approx(600.0 * 4096000 / 4160000).margin(1));
  for (size_t i : {2, 3, 4, 5}) CHECK(w.params[i].backward_us == 0);
  CHECK(w.forward_us > 0);
}

TEST_CASE("the lowest rank's latest values, of the instance with the most parameter bytes") {
  Keys small = torch2_account();
  small["param_bytes"] = "400 40";
  small["param_dtypes"] = "bfloat16 bfloat16";
  small["rebuilt_per_bucket_param_indices"] = "1 0";
  Keys stale = torch1_account();
  stale["rebuilt_per_bucket_param_indices"] = "0 1 2 3 4 5";  // superseded below
  Keys later = {{"rebuilt_per_bucket_param_indices", "5 4, 3 2 1 0"}};
  Keys rank1 = torch2_account();  // another rank's view is not read
  const auto path = write_run("instances", {2080000, 12480000},
                              {{0, 0, small}, {0, 1, stale}, {0, 1, later}, {1, 1, rank1}});
  const Workload w = workload_from_run(path);
  REQUIRE(w.params.size() == 6);
  CHECK(w.ready_order == std::vector<size_t>{5, 4, 3, 2, 1, 0});
  CHECK_FALSE(w.ddp->first_bucket_follows_cap);
  CHECK_THAT(w.source, Catch::StartsWith("DDP's own layout (instance 1, torch 1.13.0a0"));
}

TEST_CASE("without DDP's account: one gradient per bucket of the pattern, and it says so") {
  const auto path = write_run("pattern", {10400000, 4160000}, {});
  const Workload w = workload_from_run(path);
  CHECK_FALSE(w.ddp);
  CHECK(w.params.size() == 2);
  CHECK_THAT(w.source, Catch::StartsWith("the all-reduce pattern"));
  // Presets, files and pattern workloads keep the first bucket they are given.
  CHECK(plan_buckets(w, kCap, 1).first_bucket_mb == 1);
}

TEST_CASE("a dtype the tuner cannot replay falls back to the pattern, naming it") {
  Keys k = torch2_account();
  k["param_dtypes"] = "float32 float32 complex64 float32 float32 float32";
  const auto path = write_run("complex", {10400000, 4160000}, {{0, 0, k}});
  const Workload w = workload_from_run(path);
  CHECK_FALSE(w.ddp);
  CHECK(w.source.find("complex64") != std::string::npos);
}

TEST_CASE("a malformed account is bad input naming the file and the key") {
  Keys k = torch2_account();
  k["rebuilt_per_bucket_param_indices"] = "5 4 3, 2 1 1";
  const auto path = write_run("malformed", {10400000, 4160000}, {{0, 0, k}});
  CHECK_THROWS_MATCHES(
      workload_from_run(path), InputError,
      Catch::Message(path + ": ddp_info of DDP instance 0: rebuilt_per_bucket_param_indices "
                            "is not a permutation of the 6 parameters"));
}

TEST_CASE("a first bucket of its own is refused where the recorded DDP sizes it by the cap") {
  SweepSpec s;
  s.first_bucket_mb = 2;
  const Workload torch2 =
      workload_from_run(write_run("flag2", {10400000, 4160000}, {{0, 0, torch2_account()}}));
  const Workload torch1 =
      workload_from_run(write_run("flag1", {2080000, 12480000}, {{0, 0, torch1_account()}}));
  CHECK_THROWS_AS(check_sweep_workload(s, torch2), InputError);
  CHECK_NOTHROW(check_sweep_workload(s, torch1));
  CHECK(plan_buckets(torch1, kCap, 2).first_bucket_mb == 2);
  s.first_bucket_mb = 1;
  CHECK_NOTHROW(check_sweep_workload(s, torch2));
}

TEST_CASE("a recorded layout ddpscope's bucketing cannot reproduce is said in the source") {
  Keys k = torch2_account();
  k["bucket_cap_bytes"] = k["first_bucket_bytes"] = "20000000";  // would give one bucket
  const Workload w = workload_from_run(write_run("mismatch", {10400000, 4160000}, {{0, 0, k}}));
  REQUIRE(w.ddp);
  CHECK(w.source.find("does not reproduce DDP's recorded buckets") != std::string::npos);
}
