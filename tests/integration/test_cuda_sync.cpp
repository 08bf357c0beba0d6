// The CUDA wait hooks against the real libcudart: cuda_sync_workload (linked to
// the toolkit's libcudart.so) runs with and without the injector. On this
// machine there is no driver, so every call fails at once — which the job must
// still see exactly as the runtime said it; the syncs table must hold every
// wait with its stream.
#include <catch2/catch.hpp>
#include <filesystem>
#include <map>

#include "profiler/store/reader.h"
#include "tests/support/built_path.h"
#include "tests/support/subprocess.h"

using namespace ddpscope;
namespace fs = std::filesystem;

namespace {

struct Sync {
  std::string call;
  uint64_t stream;
  uint32_t tid;
  int64_t start_ns, end_ns;
};

std::vector<Sync> syncs_in(const std::string& db_path) {
  store::RunReader db(db_path);
  store::Statement q(db.connection(),
                     "SELECT call, stream, tid, start_ns, end_ns FROM syncs ORDER BY start_ns");
  std::vector<Sync> all;
  while (q.step())
    all.push_back({q.text(0), uint64_t(q.int64(1)), uint32_t(q.int64(2)), q.time(3), q.time(4)});
  return all;
}

std::map<std::string, std::string> injected(const std::string& out) {
  return {{"LD_PRELOAD", INJECT_LIB},
          {"DDPSCOPE_OUT", out},
          {"DDPSCOPE_RANK", "0"},
          {"DDPSCOPE_FLUSH_MS", "50"}};
}

// The workload's calls, in order, with the stream each names: cudaStreamPerThread
// is handle 0x2, cudaStreamLegacy 0x1; device and event waits carry no stream.
// The last two are the per-thread-default-stream (_ptsz) entry points.
void check_the_waits(const std::vector<Sync>& syncs) {
  struct Want {
    const char* call;
    uint64_t stream;
  };
  const Want want[] = {{"cudaStreamSynchronize", 2}, {"cudaDeviceSynchronize", 0},
                       {"cudaEventSynchronize", 0},  {"cudaStreamWaitEvent", 1},
                       {"cudaStreamSynchronize", 2}, {"cudaStreamWaitEvent", 1}};
  REQUIRE(syncs.size() == std::size(want));
  for (size_t i = 0; i < syncs.size(); ++i) {
    INFO("call " << i);
    CHECK(syncs[i].call == want[i].call);
    CHECK(syncs[i].stream == want[i].stream);
    CHECK(syncs[i].start_ns <= syncs[i].end_ns);
    CHECK(syncs[i].tid == syncs[0].tid);
  }
}

}  // namespace

TEST_CASE("CUDA waits: return codes unchanged, each wait recorded with its stream") {
  auto plain = testing::run({CUDA_SYNC_WORKLOAD_EXE});
  REQUIRE(plain.status == 0);
  auto dir = testing::temp_dir("cuda-sync");
  auto r = testing::run({CUDA_SYNC_WORKLOAD_EXE}, injected(dir));
  REQUIRE(r.status == 0);
  CHECK(r.out == plain.out);  // every return code as the runtime gave it
  CHECK(r.err == plain.err);
  check_the_waits(syncs_in(dir + "/rank-0.db"));
}

TEST_CASE("CUDA waits from a library loaded RTLD_LOCAL (as torch under Python)") {
  std::vector<std::string> argv{CUDA_PLUGIN_WORKLOAD_EXE, CUDA_SYNC_PLUGIN};
  auto plain = testing::run(argv);
  REQUIRE(plain.status == 0);
  auto dir = testing::temp_dir("cuda-sync-local");
  auto r = testing::run(argv, injected(dir));
  REQUIRE(r.status == 0);
  CHECK(r.out == plain.out);
  CHECK(r.err.empty());
  auto syncs = syncs_in(dir + "/rank-0.db");
  REQUIRE(syncs.size() == 4);
  const char* calls[] = {"cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize",
                         "cudaStreamWaitEvent"};
  for (size_t i = 0; i < 4; ++i) CHECK(syncs[i].call == calls[i]);
}

TEST_CASE("CUDA waits through ddpscope record, end to end") {
  auto plain = testing::run({CUDA_SYNC_WORKLOAD_EXE});
  auto dir = testing::temp_dir("cuda-sync-record");
  auto r = testing::run({DDPSCOPE_BIN, "record", "-o", dir, "--", CUDA_SYNC_WORKLOAD_EXE});
  REQUIRE(r.status == 0);
  CHECK(r.out == plain.out);
  check_the_waits(syncs_in(dir + "/run.db"));
}

TEST_CASE("a flood of waits never crowds out the collectives after it") {
  auto dir = testing::temp_dir("cuda-flood");
  auto env = injected(dir);
  env["DDPSCOPE_BUFFER_EVENTS"] = "64";  // the smallest ring
  env["DDPSCOPE_FLUSH_MS"] = "60000";    // not drained before exit
  env["DDPSCOPE_CUPTI"] = "0";
  auto r = testing::run({CUDA_FLOOD_WORKLOAD_EXE, "1000", "12"}, env);
  REQUIRE(r.status == 0);
  store::RunReader db(dir + "/rank-0.db");
  // 64 slots: the waits may take 48, the last 16 are kept for communication
  // (one communicator, then 12 collectives).
  CHECK(db.count("syncs") == 48);
  CHECK(db.count("collectives") == 12);
  CHECK(db.count("comms") == 1);
  CHECK(db.processes().at(0).dropped_events == 1000 - 48);
  CHECK(db.meta().count("count:dropped_comm_events") == 0);  // written only when some were

  // Collectives beyond the reserve are dropped and counted as such.
  auto over = testing::temp_dir("cuda-flood-over");
  env["DDPSCOPE_OUT"] = over;
  REQUIRE(testing::run({CUDA_FLOOD_WORKLOAD_EXE, "1000", "20"}, env).status == 0);
  store::RunReader db2(over + "/rank-0.db");
  CHECK(db2.count("collectives") == 15);
  CHECK(db2.processes().at(0).dropped_events == 1000 - 48 + 5);
  CHECK(db2.meta().at("count:dropped_comm_events") == "5");
}
