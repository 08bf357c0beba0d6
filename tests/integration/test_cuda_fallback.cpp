// A CUDA wait hook with no libcudart behind it (orphan_sync_workload asks the
// process for cudaDeviceSynchronize without loading the runtime): the call
// fails as the runtime fails when it cannot initialise, the injector says so
// once, and the job runs on. (Without us the lookup finds nothing: a lookup by
// name is the one way our export is in the way; docs/schema.md, README.)
#include <catch2/catch.hpp>

#include "tests/support/built_path.h"
#include "tests/support/subprocess.h"

using namespace ddpscope;

TEST_CASE("a CUDA wait without libcudart fails cleanly, one notice") {
  auto dir = testing::temp_dir("cuda-orphan");
  auto r =
      testing::run({ORPHAN_SYNC_WORKLOAD_EXE},
                   {{"LD_PRELOAD", INJECT_LIB}, {"DDPSCOPE_OUT", dir}, {"DDPSCOPE_RANK", "0"}});
  REQUIRE(r.status == 0);
  CHECK(r.out == "cudaDeviceSynchronize 3 3\n");  // cudaErrorInitializationError, twice
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK(r.err.rfind("ddpscope: no loaded object defines cudaDeviceSynchronize", 0) == 0);

  auto plain = testing::run({ORPHAN_SYNC_WORKLOAD_EXE});
  CHECK(plain.out == "no cudaDeviceSynchronize\n");
}
