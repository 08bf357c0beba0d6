// The CUPTI tracer (injector/cupti/cupti_tracer.cpp) against test doubles of
// CUPTI and of the CUDA driver (fake_cupti.cpp, fake_cuda_driver.cpp): its
// buffers are capped, its tracing stops when the recording does, and a
// collective whose records never come stays in flight.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "profiler/store/reader.h"
#include "tests/support/built_path.h"
#include "tests/support/subprocess.h"

using namespace ddpscope;

namespace {

std::map<std::string, std::string> injected(const std::string& out, int flush_ms) {
  return {{"LD_PRELOAD", INJECT_LIB},
          {"DDPSCOPE_OUT", out},
          {"DDPSCOPE_RANK", "0"},
          {"DDPSCOPE_FLUSH_MS", std::to_string(flush_ms)},
          {"DDPSCOPE_CUPTI", "1"}};
}

}  // namespace

TEST_CASE("CUPTI's buffers are capped: the rest of its records are dropped and counted") {
  auto dir = testing::temp_dir("cupti-buffers");
  auto r = testing::run({CUPTI_WORKLOAD_EXE, "buffers", "20", "300"}, injected(dir, 50));
  REQUIRE(r.status == 0);
  // 8 buffers of 8 MiB before a flush hands any back; after it, those again.
  CHECK(r.out == "cupti kinds enabled: 8\ngranted 8\ngranted 4\n");
  CHECK(r.err ==
        "ddpscope: CUPTI produced activity records faster than 64 MiB of buffers could hold "
        "between flushes: the rest are dropped (meta cupti_dropped_records, "
        "count:cupti_buffers_refused)\n");
  auto meta = store::RunReader(dir + "/rank-0.db").meta();
  CHECK(meta.at("count:cupti_buffers_refused") == "12");
  CHECK(meta.at("cupti_dropped_records") == "12000");  // the double's 1,000 per buffer
}

TEST_CASE("when the rank file cannot be written any more, CUPTI stops tracing too") {
  auto dir = testing::temp_dir("cupti-write-fails");
  auto r = testing::run({CUPTI_WORKLOAD_EXE, "write-fails", "800"}, injected(dir, 20));
  REQUIRE(r.status == 0);  // the job runs on
  CHECK(r.out == "cupti kinds enabled: 8\ncupti kinds enabled: 0\n");
  CHECK(r.err.find("recording stops, the job runs on") != std::string::npos);
}

namespace {

// The fewest flush intervals for which the rank file has shown every one of
// `rows` collectives in flight; 0 while the file or the rows are not there.
int64_t intervals_in_flight(const std::string& file, size_t rows, int flush_ms) {
  try {
    auto inflight = store::RunReader(file).rows<InflightRecord>();
    if (inflight.size() < rows) return 0;
    int64_t least = INT64_MAX;
    for (const auto& r : inflight) least = std::min(least, r.seen_ns - r.host_start_ns);
    return least / (int64_t(flush_ms) * 1000000);
  } catch (const std::exception&) {
    return 0;
  }
}

}  // namespace

// docs/hangs.md: a real NCCL hang lasts minutes. Its collective stays in
// flight however long its kernels report nothing (here, 150 flush intervals:
// no bounded wait ends it), keeps its row through kill -9, and the report
// places the hang in it.
TEST_CASE("under CUPTI a stuck collective stays in flight, through kill -9, and is the hang") {
  auto dir = testing::temp_dir("cupti-stuck");
  const int flush_ms = 20;
  testing::Process p({CUPTI_WORKLOAD_EXE, "stuck"}, injected(dir, flush_ms));
  REQUIRE(p.wait_for_line("enqueued"));
  const std::string file = dir + "/rank-0.db";
  for (int polls = 0; polls < 1200 && intervals_in_flight(file, 6, flush_ms) < 150; ++polls)
    usleep(50000);
  p.signal(SIGKILL);
  REQUIRE(p.wait().status == 128 + SIGKILL);
  store::RunReader db(file);
  auto rows = db.rows<InflightRecord>();
  REQUIRE(rows.size() == 6);  // 3 all-reduces x 2 ranks of the communicator
  for (const auto& r : rows) {
    CHECK(r.state == InflightState::enqueued);
    CHECK((r.op == Op::allreduce && r.nranks == 2 && r.count == 2 && r.seq < 3));
  }
  CHECK(intervals_in_flight(file, 6, flush_ms) >= 150);
  CHECK(db.collectives().empty());

  auto merged = testing::run({DDPSCOPE_BIN, "merge", dir, "-o", dir + "/run.db"});
  REQUIRE(merged.status == 0);
  auto report = testing::run({DDPSCOPE_BIN, "report", dir + "/run.db", "--json", dir + "/r.json"});
  REQUIRE(report.status == 0);
  auto j = nlohmann::json::parse(std::ifstream(dir + "/r.json"));
  REQUIRE(j["hangs"].size() == 1);
  const auto& hang = j["hangs"][0];
  CHECK(hang["seq"] == 0);
  CHECK(hang["op"] == "allreduce");
  CHECK(hang["state"] == "enqueued");
  CHECK(hang["waiting_ranks"] == nlohmann::json::array({0}));
}
