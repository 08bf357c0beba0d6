// The CUPTI tracer (injector/cupti/cupti_tracer.cpp) against test doubles of
// CUPTI and of the CUDA driver (fake_cupti.cpp, fake_cuda_driver.cpp): its
// buffers are capped, and its tracing stops when the recording does.
#include <catch2/catch.hpp>
#include <map>
#include <string>

#include "profiler/store/reader.h"
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
