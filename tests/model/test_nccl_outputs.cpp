// The NCCL recommendation: size ranges, the example tuner plugin's CSV, the
// environment variables.
#include <catch2/catch.hpp>
#include <sstream>

#include "tuner/model/nccl_outputs.h"

using namespace ddpscope::tuner;
using namespace ddpscope::tuner::model;

namespace {

GpuCluster eight_by_eight() {
  Topology t;
  t.nodes = 8;
  t.ranks_per_node = 8;
  t.inter.bandwidth_gbps = 400;
  return gpu_cluster_for(t);
}

std::vector<std::string> fields(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream in(line);
  for (std::string f; std::getline(in, f, ',');) out.push_back(f);
  return out;
}

}  // namespace

TEST_CASE("choice ranges cover 0 .. 4294967295 without gaps, each its own choice") {
  auto c = eight_by_eight();
  auto ranges = nccl_choice_ranges(c);
  REQUIRE(ranges.size() >= 2);
  CHECK(ranges.front().min_bytes == 0);
  CHECK(ranges.back().max_bytes == 4294967295ull);
  for (size_t i = 0; i + 1 < ranges.size(); ++i) {
    CHECK(ranges[i + 1].min_bytes == ranges[i].max_bytes + 1);
    // Each boundary is where the choice really changes.
    auto before = nccl_best_allreduce(c, double(ranges[i].max_bytes));
    auto after = nccl_best_allreduce(c, double(ranges[i + 1].min_bytes));
    CHECK((before.algo != after.algo || before.proto != after.proto));
  }
  CHECK(ranges.front().algo == NcclAlgo::tree);
  CHECK(ranges.back().algo == NcclAlgo::ring);
  CHECK(ranges.back().proto == NcclProto::simple);
}

TEST_CASE("tuner-plugin CSV: NCCL's example format, ten fields, lower-case names") {
  auto c = eight_by_eight();
  std::ostringstream out;
  write_nccl_tuner_config(out, c, nccl_choice_ranges(c));
  std::stringstream in(out.str());
  int rows = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    auto f = fields(line);
    REQUIRE(f.size() == 10);
    CHECK(f[0] == "allreduce");
    CHECK((f[3] == "tree" || f[3] == "ring"));
    CHECK((f[4] == "ll" || f[4] == "ll128" || f[4] == "simple"));
    CHECK(f[5] == "-1");  // channels: NCCL's default
    CHECK(f[6] == "8");   // nNodes
    CHECK(f[7] == "64");  // nRanks
    CHECK(f[8] == "-1");
    CHECK(f[9] == "-1");
    ++rows;
  }
  CHECK(rows == int(nccl_choice_ranges(c).size()));
  CHECK(out.str().find("# collective_type,min_bytes,max_bytes,algorithm,protocol,channels,"
                       "nNodes,nRanks,numPipeOps,regBuff") != std::string::npos);
}

TEST_CASE("environment: NCCL_ALGO/NCCL_PROTO only when one pair wins for every bucket") {
  auto c = eight_by_eight();
  // 1 and 2 GiB buckets: ring/Simple both (25 MB would be ring/LL128).
  auto env = nccl_environment(c, {1ull << 30, 2ull << 30}, "");
  CHECK(env == std::vector<std::string>{"NCCL_ALGO=Ring", "NCCL_PROTO=Simple"});
  auto mixed = nccl_environment(c, {1024, 25u << 20}, "/tmp/t.conf");
  CHECK(mixed == std::vector<std::string>{"NCCL_TUNER_PLUGIN=libnccl-tuner-example.so",
                                          "NCCL_TUNER_CONFIG_FILE=/tmp/t.conf"});
}
