// tune --backend model beside a recorded run's NCCL choices
// (tuner/model/nccl_recorded.h): per all-reduce size, NCCL's most frequent
// choice from its profiler plugin's joined rows, the model's own choice for
// the cluster, whether they agree, and the model's time for both.
#include <catch2/catch.hpp>

#include "profiler/store/writer.h"
#include "tests/support/subprocess.h"
#include "tuner/model/nccl_recorded.h"

using namespace ddpscope;
using namespace ddpscope::tuner::model;

namespace {

// A run.db-shaped file: all-reduces of two sizes, each joined to the
// plugin's row for it (as the merge joins them), NCCL choosing `choice` for
// all but one call of the small size.
std::string run_with_choices(const std::string& dir) {
  std::string path = dir + "/run.db";
  store::RankWriter w(path, {{"kind", "run"}, {"timeline", "wall"}});
  w.begin();
  ProcessRecord p;
  p.world_size = 16;
  w.put(p);
  int64_t id = 0;
  auto add = [&](uint64_t bytes, const char* algo, const char* proto) {
    CollectiveRecord c;
    c.id = ++id;
    c.nranks = 16;
    c.seq = uint64_t(id);
    c.dtype = Dtype::float32;
    c.count = bytes / 4;
    c.bytes = bytes;
    c.host_start_ns = c.start_ns = id * 1000;
    c.host_end_ns = c.end_ns = id * 1000 + 500;
    c.timing = Timing::kernel_channels;
    w.add(c);
    NcclPluginCollectiveRecord n;
    n.func = "AllReduce";
    n.algo = algo;
    n.proto = proto;
    n.count = int64_t(c.count);
    n.coll_key = id;
    n.collective_id = id;
    w.add(n);
  };
  for (int i = 0; i < 4; ++i) add(4096, "TREE", "LL");
  add(4096, "RING", "LL");  // the odd one out: the table takes the most frequent
  for (int i = 0; i < 3; ++i) add(64 << 20, "RING", "LL");  // surely not NCCL's tables' choice
  w.commit();
  w.close();
  return path;
}

}  // namespace

TEST_CASE("model vs recorded NCCL choices: per size, the most frequent choice and the model's") {
  auto path = run_with_choices(testing::temp_dir("nccl_recorded"));
  GpuCluster cluster = gpu_cluster_for(tuner::parse_topology("2x8"));
  auto rows = compare_nccl_choices(path, cluster);
  REQUIRE(rows.size() == 2);

  CHECK(rows[0].bytes == 4096);
  CHECK(rows[0].calls == 5);
  CHECK(rows[0].recorded_algo == "TREE");
  CHECK(rows[0].recorded_proto == "LL");
  NcclEstimate small = nccl_best_allreduce(cluster, 4096);
  CHECK(rows[0].model_algo == (small.algo == NcclAlgo::tree ? "TREE" : "RING"));
  CHECK(rows[0].agree == (small.algo == NcclAlgo::tree && small.proto == NcclProto::ll));

  // LL at 64 MiB: NCCL's own cost model prices it far slower than its pick.
  CHECK(rows[1].bytes == uint64_t(64 << 20));
  CHECK(rows[1].recorded_proto == "LL");
  CHECK_FALSE(rows[1].agree);
  CHECK(rows[1].model_proto != "LL");
  CHECK(rows[1].recorded_model_us > 2 * rows[1].model_us);
}

TEST_CASE("model vs recorded NCCL choices: a run without the plugin gives no rows") {
  auto dir = testing::temp_dir("nccl_recorded_none");
  store::RankWriter w(dir + "/run.db", {{"kind", "run"}});
  w.begin();
  w.add(ProcessRecord{});
  w.commit();
  w.close();
  CHECK(
      compare_nccl_choices(dir + "/run.db", gpu_cluster_for(tuner::parse_topology("1x8"))).empty());
}
