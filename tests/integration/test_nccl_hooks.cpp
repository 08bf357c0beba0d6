// The NCCL hooks against a real program (nccl_workload) that drives the
// NCCL-ABI test library under LD_PRELOAD: the database must hold exactly the
// calls made, with their arguments, groups and communicators.
#include <signal.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <map>
#include <set>

#include "profiler/store/reader.h"
#include "tests/support/built_path.h"
#include "tests/support/subprocess.h"

using namespace ddpscope;
namespace fs = std::filesystem;

namespace {

// How many times slower a sanitizer build runs the injector's writer: a
// fixed factor per build, for the waits that count flush intervals of wall
// time. Under ThreadSanitizer, beside the leg's other tests on a 2-core
// machine, the writer's first commit once came later than three intervals
// after the job's last call; the leg is there for races, not for the writer's
// pace.
#ifndef __has_feature  // GCC before 14 has no __has_feature; it defines __SANITIZE_THREAD__
#define __has_feature(x) 0
#endif
#if defined(__SANITIZE_THREAD__) || __has_feature(thread_sanitizer)
constexpr int kWriterSlowdown = 10;
#elif defined(__SANITIZE_ADDRESS__) || __has_feature(address_sanitizer)
// The ASan leg's tests run on one core beside the suite's other tests.
constexpr int kWriterSlowdown = 5;
#else
constexpr int kWriterSlowdown = 1;
#endif

// The test library runs on the host: there is no CUDA driver, so CUPTI is off
// here (its one notice has a test of its own below).
std::map<std::string, std::string> injected(const std::string& out, int flush_ms = 50) {
  return {{"LD_PRELOAD", INJECT_LIB},
          {"DDPSCOPE_OUT", out},
          {"DDPSCOPE_FLUSH_MS", std::to_string(flush_ms)},
          {"DDPSCOPE_CUPTI", "0"}};
}

testing::Result workload(const std::vector<std::string>& args,
                         std::map<std::string, std::string> env) {
  std::vector<std::string> argv{WORKLOAD_EXE};
  argv.insert(argv.end(), args.begin(), args.end());
  return testing::run(argv, env);
}

std::vector<std::string> files_in(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename());
  return names;
}

}  // namespace

TEST_CASE("every NCCL call of a 4-rank script is recorded with its arguments") {
  auto dir = testing::temp_dir("script");
  auto env = injected(dir);
  env["DDPSCOPE_RANK"] = "0";
  auto r = workload({"script"}, env);
  REQUIRE(r.status == 0);
  REQUIRE(r.err.empty());

  store::RunReader db(dir + "/rank-0.db");
  auto all = db.collectives();
  REQUIRE(all.size() == 48);

  for (int cr = 0; cr < 4; ++cr) {
    auto mine = db.collectives("nranks = 4 AND comm_rank = " + std::to_string(cr));
    std::sort(mine.begin(), mine.end(), [](auto& a, auto& b) { return a.seq < b.seq; });
    REQUIRE(mine.size() == 11);
    struct Want {
      Op op;
      uint64_t count, bytes;
      int root;
      Dtype dtype;
    };
    Want want[] = {{Op::allreduce, 1024, 4096, -1, Dtype::float32},
                   {Op::broadcast, 512, 2048, 1, Dtype::float32},
                   {Op::reduce, 256, 1024, 2, Dtype::float32},
                   {Op::allgather, 256, 4096, -1, Dtype::float32},
                   {Op::reduce_scatter, 128, 2048, -1, Dtype::float32},
                   {Op::alltoall, 64, 1024, -1, Dtype::float32},
                   {Op::gather, 32, 512, 0, Dtype::float32},
                   {Op::scatter, 16, 256, 3, Dtype::float32},
                   {Op::broadcast, 8, 32, 0, Dtype::int32},
                   {Op::send, 100, 200, -1, Dtype::float16},
                   {Op::recv, 100, 200, -1, Dtype::float16}};
    for (size_t i = 0; i < 11; ++i) {
      INFO("comm rank " << cr << " call " << i);
      CHECK(mine[i].seq == i);
      CHECK(mine[i].op == want[i].op);
      CHECK(mine[i].count == want[i].count);
      CHECK(mine[i].bytes == want[i].bytes);
      CHECK(mine[i].root == want[i].root);
      CHECK(mine[i].dtype == want[i].dtype);
      CHECK(mine[i].stream == 0x1000u + cr);
      CHECK(mine[i].timing == Timing::host);
      CHECK(mine[i].host_end_ns >= mine[i].host_start_ns);
    }
    CHECK(mine[0].redop == RedOp::sum);
    CHECK(mine[2].redop == RedOp::max);
    CHECK(mine[9].peer == (cr + 1) % 4);
    CHECK(mine[10].peer == (cr + 3) % 4);
    CHECK(mine[9].group_id != 0);
    CHECK(mine[9].group_id == mine[10].group_id);
    CHECK(mine[8].group_id == 0);
  }
  // One communicator id shared by the four ranks; two split halves below it.
  auto world = db.collectives("nranks = 4");
  std::set<uint64_t> world_ids, half_ids;
  for (auto& c : world) world_ids.insert(c.comm_id);
  CHECK(world_ids.size() == 1);
  auto halves = db.collectives("nranks = 2");
  REQUIRE(halves.size() == 4);
  for (auto& c : halves) {
    half_ids.insert(c.comm_id);
    CHECK(c.op == Op::allreduce);
    CHECK(c.dtype == Dtype::bfloat16);
    CHECK(c.redop == RedOp::avg);
    CHECK(c.bytes == 4096);
    CHECK(c.seq == 0);
  }
  CHECK(half_ids.size() == 2);

  auto comms = db.comms();
  REQUIRE(comms.size() == 8);
  for (auto& c : comms) {
    CHECK(c.backend == Backend::nccl);
    CHECK(c.end == CommEnd::destroy);
    CHECK(c.ended_ns >= c.created_ns);
    if (c.nranks == 4) {
      CHECK(c.origin == CommOrigin::init_rank);
      CHECK(c.comm_id == *world_ids.begin());
    } else {
      CHECK(c.origin == CommOrigin::split);
      CHECK(c.parent_comm_id == *world_ids.begin());
    }
  }
  auto procs = db.processes();
  REQUIRE(procs.size() == 1);
  CHECK(procs[0].rank_source == "DDPSCOPE_RANK");
  CHECK(procs[0].dropped_events == 0);
}

TEST_CASE("calls from many threads at once lose nothing") {
  auto dir = testing::temp_dir("threads");
  auto r = workload({"threads", "8", "20000"}, injected(dir));
  REQUIRE(r.status == 0);
  store::RunReader db(dir + "/rank-0.db");
  CHECK(db.processes()[0].rank_source == "comm");
  CHECK(db.processes()[0].dropped_events == 0);
  auto all = db.collectives();
  REQUIRE(all.size() == 8 * 20000);
  std::map<int, std::set<uint64_t>> seqs;
  std::map<int, std::set<uint32_t>> tids;
  for (auto& c : all) {
    REQUIRE(c.count == 16);
    seqs[c.comm_rank].insert(c.seq);
    tids[c.comm_rank].insert(c.tid);
  }
  for (int t = 0; t < 8; ++t) {
    CHECK(seqs[t].size() == 20000);
    CHECK(*seqs[t].rbegin() == 19999);
    CHECK(tids[t].size() == 1);
  }
  // One ring per thread recording at a time (the main thread's too), fewer
  // where a thread ended and its ring was handed on before the next began.
  int rings = std::stoi(db.meta().at("event_rings"));
  CHECK(rings >= 1);
  CHECK(rings <= 9);
}

TEST_CASE("kill -9 keeps every event older than two flush intervals") {
  auto dir = testing::temp_dir("kill9");
  testing::Process p({WORKLOAD_EXE, "wait", "500"}, injected(dir, 100));
  REQUIRE(p.wait_for_line("ready"));
  usleep(3 * 100 * 1000 * kWriterSlowdown);  // three flush intervals after the last call
  p.signal(SIGKILL);
  auto r = p.wait();
  CHECK(r.status == 128 + SIGKILL);
  store::RunReader db(dir + "/rank-0.db");
  CHECK(db.count("collectives") == 2 * 500);
}

TEST_CASE("SIGTERM flushes, then the job dies of it as it would without us") {
  auto dir = testing::temp_dir("sigterm");
  testing::Process p({WORKLOAD_EXE, "wait", "300"}, injected(dir, 60000));  // no periodic flush
  REQUIRE(p.wait_for_line("ready"));
  p.signal(SIGTERM);
  auto r = p.wait();
  CHECK(r.status == 128 + SIGTERM);
  store::RunReader db(dir + "/rank-0.db");
  CHECK(db.count("collectives") == 2 * 300);
}

TEST_CASE("a forked child never writes its parent's events") {
  auto dir = testing::temp_dir("fork");
  auto r = workload({"fork"}, injected(dir));
  REQUIRE(r.status == 0);
  CHECK(files_in(dir) == std::vector<std::string>{"rank-0.db"});
  store::RunReader db(dir + "/rank-0.db");
  CHECK(db.count("collectives") == 2 * 10);
}

TEST_CASE("a child forked before recording started does not pose as its parent's rank") {
  auto dir = testing::temp_dir("fork-early");
  auto env = injected(dir);
  env["RANK"] = "0";  // the parent's, inherited by its DataLoader-like child
  auto r = workload({"fork-early"}, env);
  REQUIRE(r.status == 0);
  CHECK(files_in(dir) == std::vector<std::string>{"rank-0.db"});
  store::RunReader db(dir + "/rank-0.db");
  CHECK(db.count("collectives") == 2 * 10);
  CHECK(std::to_string(db.processes().at(0).pid) + "\n" == r.out);
}

TEST_CASE("children of a fork-based launcher, forked before recording, are ranks") {
  auto dir = testing::temp_dir("fork-ranks");
  auto r = workload({"fork-ranks", "2"}, injected(dir));
  REQUIRE(r.status == 0);
  auto names = files_in(dir);
  std::sort(names.begin(), names.end());
  CHECK(names == std::vector<std::string>{"rank-0.db", "rank-1.db"});
  for (int rank = 0; rank < 2; ++rank) {
    store::RunReader db(dir + "/rank-" + std::to_string(rank) + ".db");
    CHECK(db.count("collectives") == 3 + rank);
    CHECK(db.processes().at(0).rank_source == "RANK");
  }
}

TEST_CASE("ncclGroupSimulateEnd ends the group, and its calls, never run, are not recorded") {
  auto dir = testing::temp_dir("simulate");
  auto r = workload({"simulate"}, injected(dir));
  REQUIRE(r.status == 0);
  store::RunReader db(dir + "/rank-0.db");
  auto all = db.collectives();
  std::sort(all.begin(), all.end(), [](auto& a, auto& b) { return a.seq < b.seq; });
  REQUIRE(all.size() == 3);
  CHECK(all[0].count == 8);
  CHECK(all[1].count == 16);
  CHECK(all[2].count == 32);
  for (size_t i = 0; i < 3; ++i) CHECK(all[i].seq == i);
  CHECK(all[0].group_id != 0);
  CHECK(all[1].group_id == 0);  // the simulated groups left no depth behind
  CHECK(all[2].group_id != 0);
  CHECK(all[2].group_id != all[0].group_id);
}

TEST_CASE("a destroyed communicator is forgotten: a new one at its address is another") {
  auto dir = testing::temp_dir("reuse");
  auto r = workload({"reuse"}, injected(dir));
  REQUIRE(r.status == 0);
  REQUIRE(r.out == "reused\n");  // else this run proves nothing
  store::RunReader db(dir + "/rank-0.db");
  auto all = db.collectives();
  std::sort(all.begin(), all.end(), [](auto& a, auto& b) { return a.count < b.count; });
  REQUIRE(all.size() == 2);
  CHECK(all[0].comm_id != all[1].comm_id);
  CHECK(all[1].seq == 0);  // the new communicator's first call
  auto comms = db.comms();
  REQUIRE(comms.size() == 2);
  CHECK(comms[0].comm_id != comms[1].comm_id);
}

TEST_CASE("a non-blocking split is asked about only once NCCL says it is ready") {
  // Readiness seen by the ncclCommGetAsyncError hook, or only at first use.
  auto how = GENERATE(as<std::string>{}, "0", "1");
  INFO("unhooked poll: " << how);
  auto dir = testing::temp_dir("split-nonblocking-" + how);
  auto r = workload({"split-nonblocking", how}, injected(dir));
  REQUIRE(r.status == 0);
  CHECK(r.out == "last error: ''\n");  // no question NCCL refused, in the job's name
  store::RunReader db(dir + "/rank-0.db");
  std::vector<CommRecord> splits;
  for (auto& c : db.comms())
    if (c.origin == CommOrigin::split) splits.push_back(c);
  REQUIRE(splits.size() == 2);
  std::set<int> ranks;
  for (auto& c : splits) {
    CHECK(c.nranks == 2);
    ranks.insert(c.comm_rank);
  }
  CHECK(ranks == std::set<int>{0, 1});
  auto gathers = db.collectives("op = 'allgather'");
  REQUIRE(gathers.size() == 2);
  for (auto& c : gathers) {
    CHECK(c.nranks == 2);
    CHECK(c.bytes == 16 * 4 * 2);
  }
}

TEST_CASE("a datatype newer than ddpscope knows: one notice, marked and counted") {
  auto dir = testing::temp_dir("newer-dtype");
  auto env = injected(dir);
  env["DDPSCOPE_TESTNCCL_NEWER_DTYPE"] = "1";  // the test library plays a newer NCCL
  auto r = workload({"newer-dtype"}, env);
  REQUIRE(r.status == 0);
  CHECK(r.err ==
        "ddpscope: NCCL datatype 12 is newer than this ddpscope knows: its calls are recorded "
        "with dtype 'unknown' and 0 bytes (meta count:unknown_dtype_calls)\n");
  store::RunReader db(dir + "/rank-0.db");
  auto unknown = db.collectives("dtype = 'unknown'");
  REQUIRE(unknown.size() == 2);
  for (auto& c : unknown) CHECK(c.bytes == 0);
  CHECK(db.collectives("dtype = 'float32'").at(0).bytes == 16);
  CHECK(db.meta().at("count:unknown_dtype_calls") == "2");
}

TEST_CASE("exit status and output pass through unchanged") {
  auto plain = workload({"exit", "7"}, {});
  auto dir = testing::temp_dir("exit");
  auto r = workload({"exit", "7"}, injected(dir));
  CHECK(plain.status == 7);
  CHECK(r.status == 7);
  CHECK(r.out == plain.out);
  CHECK(r.err.empty());
  store::RunReader db(dir + "/rank-0.db");
  CHECK(db.count("collectives") == 1);
}

TEST_CASE("an unwritable output directory: the job completes, one warning") {
  auto r = workload({"exit", "3"}, injected("/proc/ddpscope-cannot-write-here"));
  CHECK(r.status == 3);
  CHECK(r.out == "workload output line\n");
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK(r.err.rfind("ddpscope: cannot write", 0) == 0);
}

TEST_CASE("without a CUDA driver: one notice, and NCCL calls stay host-timed") {
  auto dir = testing::temp_dir("nodriver");
  auto env = injected(dir);
  env["DDPSCOPE_CUPTI"] = "1";
  auto plain = workload({"exit", "0"}, {});
  auto r = workload({"exit", "0"}, env);
  CHECK(r.status == 0);
  CHECK(r.out == plain.out);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK(r.err.rfind("ddpscope: no CUPTI kernel timing (no CUDA driver in this process)", 0) == 0);
  store::RunReader db(dir + "/rank-0.db");
  CHECK(db.count("collectives") == 1);
  CHECK(db.count("kernels") == 0);
  CHECK(db.collectives()[0].timing == Timing::host);

  auto quiet_dir = testing::temp_dir("nodriver-quiet");
  env = injected(quiet_dir);
  env["DDPSCOPE_CUPTI"] = "1";
  env["DDPSCOPE_QUIET"] = "1";
  CHECK(workload({"exit", "0"}, env).err.empty());
}
