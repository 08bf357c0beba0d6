// The CUDA wait hooks against the real libcudart: cuda_sync_workload (linked to
// the toolkit's libcudart.so) runs with and without the injector. On this
// machine there is no driver, so every call fails at once — which the job must
// still see exactly as the runtime said it; the syncs table must hold the four
// waits with their streams.
#include <catch2/catch.hpp>
#include <filesystem>
#include <map>

#include "profiler/store/reader.h"
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
void check_the_four_waits(const std::vector<Sync>& syncs) {
  REQUIRE(syncs.size() == 4);
  CHECK(syncs[0].call == "cudaStreamSynchronize");
  CHECK(syncs[0].stream == 2);
  CHECK(syncs[1].call == "cudaDeviceSynchronize");
  CHECK(syncs[1].stream == 0);
  CHECK(syncs[2].call == "cudaEventSynchronize");
  CHECK(syncs[2].stream == 0);
  CHECK(syncs[3].call == "cudaStreamWaitEvent");
  CHECK(syncs[3].stream == 1);
  for (const auto& s : syncs) {
    CHECK(s.start_ns <= s.end_ns);
    CHECK(s.tid == syncs[0].tid);
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
  check_the_four_waits(syncs_in(dir + "/rank-0.db"));
}

TEST_CASE("CUDA waits through ddpscope record, end to end") {
  auto plain = testing::run({CUDA_SYNC_WORKLOAD_EXE});
  auto dir = testing::temp_dir("cuda-sync-record");
  auto r = testing::run({DDPSCOPE_BIN, "record", "-o", dir, "--", CUDA_SYNC_WORKLOAD_EXE});
  REQUIRE(r.status == 0);
  CHECK(r.out == plain.out);
  check_the_four_waits(syncs_in(dir + "/run.db"));
}
