// The real function behind a hook lives where no name-based search finds it
// (an NCCL under another soname, loaded RTLD_LOCAL by an extension): the hook
// must still pass every call on, so the job computes exactly what it computes
// without us, and the run must say which object its calls went to.
#include <catch2/catch.hpp>

#include "profiler/store/reader.h"
#include "tests/support/built_path.h"
#include "tests/support/subprocess.h"

using namespace ddpscope;

TEST_CASE("a real NCCL under an unguessable name, loaded RTLD_LOCAL: same results, recorded") {
  auto plain = testing::run({HIDDEN_WORKLOAD_EXE, HIDDEN_PLUGIN});
  REQUIRE(plain.status == 0);
  // 3 ranks, x[i] = (r + 1) / 2 + i summed: 3 + 3i.
  REQUIRE(plain.out == "rc 0\nrank 0: 3 6 9 12 15\nrank 1: 3 6 9 12 15\nrank 2: 3 6 9 12 15\n");

  auto dir = testing::temp_dir("hidden-real");
  auto hooked = testing::run({HIDDEN_WORKLOAD_EXE, HIDDEN_PLUGIN}, {{"LD_PRELOAD", INJECT_LIB},
                                                                    {"DDPSCOPE_OUT", dir},
                                                                    {"DDPSCOPE_RANK", "0"},
                                                                    {"DDPSCOPE_CUPTI", "0"}});
  CHECK(hooked.status == plain.status);
  CHECK(hooked.out == plain.out);
  CHECK(hooked.err.empty());

  store::RunReader db(dir + "/rank-0.db");
  auto calls = db.collectives("op = 'allreduce'");
  CHECK(calls.size() == 3);
  for (const auto& c : calls) CHECK(c.bytes == 5 * 4);
  auto meta = db.meta();
  REQUIRE(meta.count("real:ncclAllReduce") == 1);
  std::string where = meta["real:ncclAllReduce"];
  CHECK(where.substr(where.rfind('/') + 1) == "libcollectives_hidden.so");
}
