// The CUDA-event timer (injector/cuda/event_timer.cpp) against the CUDA driver
// test double (fake_cuda_driver.cpp): work still running stays pending, a real
// timing error resolves at once, timer slots always come back, another
// thread's graph capture is never invalidated by the writer, and collectives
// captured into a graph are counted, not passed off as run.
#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <map>
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
          {"DDPSCOPE_CUPTI", "0"}};  // the test double drives no CUPTI
}

testing::Result workload(const std::vector<std::string>& args,
                         const std::map<std::string, std::string>& env) {
  std::vector<std::string> argv{CUDA_EVENT_WORKLOAD_EXE};
  argv.insert(argv.end(), args.begin(), args.end());
  return testing::run(argv, env);
}

// Rows of `table` in the rank file of a process still running: 0 while the
// file or the table is not there yet.
int64_t rows_in(const std::string& dir, const std::string& table) {
  try {
    store::RunReader db(dir + "/rank-0.db");
    return db.count(table);
  } catch (const std::exception&) {
    return 0;
  }
}

}  // namespace

TEST_CASE("work still running keeps its collectives pending, then they are event-timed") {
  auto dir = testing::temp_dir("event-pending");
  auto r = workload({"pending", "400"}, injected(dir, 50));  // ~8 flushes while held
  REQUIRE(r.status == 0);
  int64_t released = std::stoll(r.out.substr(r.out.find(' ') + 1));
  store::RunReader db(dir + "/rank-0.db");
  auto all = db.collectives();
  REQUIRE(all.size() == 5);
  for (auto& c : all) {
    CHECK(c.timing == Timing::event);
    // The GPU side ran when the stream was released, long after the call:
    // nearer the release than the call (the anchor's error is microseconds).
    CHECK(c.start_ns >= released - (released - c.host_end_ns) / 2);
    CHECK(c.end_ns >= c.start_ns);
  }
  CHECK(db.meta().count("count:untimed_collectives") == 0);
}

// docs/hangs.md: an NCCL collective whose GPU work never runs is in flight,
// `enqueued`, in the rank file, and stays there when the process is killed.
TEST_CASE("enqueued collectives whose work never runs are in flight, through kill -9") {
  auto dir = testing::temp_dir("event-stuck");
  testing::Process p({CUDA_EVENT_WORKLOAD_EXE, "stuck"}, injected(dir, 50));
  REQUIRE(p.wait_for_line("enqueued"));
  for (int waited = 0; waited < 30000 && rows_in(dir, "inflight") < 3; waited += 50) usleep(50000);
  p.signal(SIGKILL);
  REQUIRE(p.wait().status == 128 + SIGKILL);
  store::RunReader db(dir + "/rank-0.db");
  auto rows = db.rows<InflightRecord>();
  REQUIRE(rows.size() == 3);
  for (const auto& r : rows) {
    CHECK(r.state == InflightState::enqueued);
    CHECK((r.op == Op::allreduce && r.count == 2 && r.bytes == 8));
    CHECK(r.seen_ns >= r.host_start_ns);
  }
  CHECK(db.collectives().empty());
}

// The last flush (a normal exit) waits a moment for the work, then leaves
// what never ran in flight: its completion is unknown, so it is not written
// as a completed collective.
TEST_CASE("work unfinished at exit stays in flight, not written as completed") {
  auto dir = testing::temp_dir("event-stuck-exit");
  auto r = workload({"stuck-exit"}, injected(dir, 50));
  REQUIRE(r.status == 0);
  store::RunReader db(dir + "/rank-0.db");
  CHECK(db.processes().at(0).finalized == 1);
  auto rows = db.rows<InflightRecord>();
  REQUIRE(rows.size() == 3);
  for (const auto& row : rows) CHECK(row.state == InflightState::enqueued);
  CHECK(db.collectives().empty());
  CHECK(db.meta().count("count:untimed_collectives") == 0);
}

TEST_CASE("a timing error that will not go away resolves at once, host-timed and counted") {
  auto dir = testing::temp_dir("event-error");
  testing::Process p({CUDA_EVENT_WORKLOAD_EXE, "elapsed-error"}, injected(dir, 50));
  REQUIRE(p.wait_for_line("ready"));
  // Held back as pending, they would never be written: wait (30 s at most,
  // a bound on a stuck test) for the writer's flushes, then kill, so no exit
  // handler runs.
  for (int waited = 0; waited < 30000 && rows_in(dir, "collectives") < 5; waited += 50)
    usleep(50000);
  p.signal(SIGKILL);
  CHECK(p.wait().status == 128 + SIGKILL);
  store::RunReader db(dir + "/rank-0.db");
  auto all = db.collectives();
  REQUIRE(all.size() == 5);  // written during the run, not held back as pending
  for (auto& c : all) CHECK(c.timing == Timing::host);
  CHECK(db.meta().at("count:untimed_collectives") == "5");
}

TEST_CASE("timer slots come back from failed calls and from events a full ring dropped") {
  auto dir = testing::temp_dir("event-slots");
  auto env = injected(dir, 500);
  env["DDPSCOPE_BUFFER_EVENTS"] = "64";
  auto r = workload({"slots", "1500"}, env);  // 2,500 failed and 2,500 mostly dropped calls
  REQUIRE(r.status == 0);
  store::RunReader db(dir + "/rank-0.db");
  CHECK(db.processes().at(0).dropped_events > 2048);  // more drops than the pool's slots
  auto later = db.collectives("count = 2");
  REQUIRE(later.size() == 10);
  for (auto& c : later) CHECK(c.timing == Timing::event);
}

TEST_CASE("another thread's global-mode capture survives the writer's polling") {
  auto plain = workload({"capture-global", "400"}, {});
  REQUIRE(plain.status == 0);
  REQUIRE(plain.out == "end capture 0\n");
  auto dir = testing::temp_dir("event-capture-global");
  auto r = workload({"capture-global", "400"}, injected(dir, 50));  // pending events polled
  REQUIRE(r.status == 0);
  CHECK(r.out == plain.out);
  store::RunReader db(dir + "/rank-0.db");
  CHECK(db.count("collectives") == 3);
}

TEST_CASE("collectives captured into a CUDA graph: not recorded, counted, said once") {
  auto dir = testing::temp_dir("event-captured");
  auto r = workload({"captured"}, injected(dir, 50));
  REQUIRE(r.status == 0);
  CHECK(r.out == "end capture 0\n");  // our hooks did not invalidate the capture
  CHECK(r.err ==
        "ddpscope: NCCL calls captured into a CUDA graph are not recorded: they run at the "
        "graph's launches, which ddpscope does not see (meta count:graph_captured_collectives)\n");
  store::RunReader db(dir + "/rank-0.db");
  auto all = db.collectives();
  REQUIRE(all.size() == 2);
  for (auto& c : all) {
    CHECK(c.count == 2);
    CHECK(c.timing == Timing::event);
  }
  CHECK(db.meta().at("count:graph_captured_collectives") == "4");
}

TEST_CASE("a driver loaded after recording started still times collectives") {
  auto dir = testing::temp_dir("event-late-driver");
  auto r = testing::run({CUDA_LATE_DRIVER_WORKLOAD_EXE, FAKE_CUDA_DRIVER}, injected(dir, 50));
  REQUIRE(r.status == 0);
  store::RunReader db(dir + "/rank-0.db");
  auto all = db.collectives();
  REQUIRE(all.size() == 3);
  for (auto& c : all) CHECK(c.timing == Timing::event);
}
