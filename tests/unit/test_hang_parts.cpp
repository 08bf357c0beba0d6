// The parts of the hang diagnosis that read text written by others:
// faulthandler's dump of every thread, and record's rank-exits.tsv.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "profiler/analysis/analyze.h"
#include "profiler/analysis/hangs.h"
#include "profiler/analysis/python_stacks.h"
#include "profiler/core/input_error.h"
#include "profiler/store/launch_account.h"
#include "profiler/store/merge.h"
#include "profiler/store/writer.h"
#include "tests/support/records.h"
#include "tests/support/subprocess.h"

using namespace ddpscope;

namespace {

// As Python 3.11's faulthandler writes it: a worker thread first, then the
// thread that took the signal (here a Gloo-like worker, not the main one).
const char* kDump =
    "Thread 0x00007f2a1bfff640 (most recent call first):\n"
    "  File \"/usr/lib/python3.11/threading.py\", line 320 in wait\n"
    "  File \"/usr/lib/python3.11/threading.py\", line 1002 in _bootstrap\n"
    "\n"
    "Current thread 0x00007f2a2a4f7740 (most recent call first):\n"
    "  File \"/job/train.py\", line 186 in stall\n"
    "  File \"/job/train.py\", line 140 in main\n"
    "  File \"/job/train.py\", line 206 in <module>\n";

}  // namespace

TEST_CASE("the main thread of a stack dump is the one running the script") {
  auto frames = analysis::main_thread_frames(kDump);
  REQUIRE(frames.size() == 3);
  CHECK(frames[0] == "/job/train.py:186 in stall");
  CHECK(frames[2] == "/job/train.py:206 in <module>");
  CHECK(analysis::main_thread_frames(kDump, 1).size() == 1);
}

TEST_CASE("without a script's top level the current thread is taken") {
  std::string dump =
      "Thread 0x1 (most recent call first):\n  File \"a.py\", line 1 in f\n\n"
      "Current thread 0x2 (most recent call first):\n  File \"b.py\", line 7 in g\n";
  CHECK(analysis::main_thread_frames(dump) == std::vector<std::string>{"b.py:7 in g"});
  CHECK(analysis::main_thread_frames("not a dump\n").empty());
}

TEST_CASE("your code is neither Python's, nor a package's, nor ddpscope's hook") {
  CHECK(analysis::users_code("/job/train.py:147 in main"));
  CHECK_FALSE(analysis::users_code(
      "/venv/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py:5430 in f"));
  CHECK_FALSE(analysis::users_code("/usr/lib/python3/dist-packages/torch/nn/module.py:1 in f"));
  CHECK_FALSE(analysis::users_code("/usr/lib/python3.11/threading.py:320 in wait"));
  // The hook wraps torch.distributed's collectives: in a stuck rank's stack
  // it sits between torch's frames and the job's.
  CHECK_FALSE(
      analysis::users_code("/opt/ddpscope/python/ddpscope_ddp/c10d_patches.py:69 in "
                           "user_call"));
}

TEST_CASE("how a rank ended is said in words") {
  CHECK(analysis::how_rank_ended(1, 0, true, false) == "exited with status 1");
  CHECK(analysis::how_rank_ended(-1, 9, true, false) == "killed by signal 9 (SIGKILL)");
  CHECK(analysis::how_rank_ended(-1, 0, false, false) == "left no rank file");
  CHECK(analysis::how_rank_ended(-1, 0, true, true) == "exited (its file was closed)");
}

TEST_CASE("rank exits round-trip, and a malformed line is named") {
  const std::string dir = testing::temp_dir("exits");
  CHECK(store::read_rank_exits(dir).empty());
  store::write_rank_exits(dir, {{0, 0, 0}, {1, -1, 9}, {2, 134, 0}});
  auto back = store::read_rank_exits(dir);
  REQUIRE(back.size() == 3);
  CHECK((back[1].exit_code == -1 && back[1].signal == 9));
  CHECK(back[2].exit_code == 134);
  std::ofstream(store::rank_exits_path(dir)) << "0\t0\t0\n1\tbad\n";
  CHECK_THROWS_WITH(store::read_rank_exits(dir),
                    Catch::Contains("rank-exits.tsv") && Catch::Contains("line 2"));
}

TEST_CASE("stack dumps are found by pid, empty ones left out") {
  const std::string dir = testing::temp_dir("stacks");
  std::ofstream(dir + "/stacks-42.txt") << kDump;
  std::ofstream(dir + "/stacks-43.txt");
  std::ofstream(dir + "/stacks-x.txt") << "x";
  auto dumps = store::read_stack_dumps(dir);
  REQUIRE(dumps.size() == 1);
  CHECK(dumps[0].pid == 42);
}

namespace {

CollectiveRecord bucket(int rank, uint64_t seq) {
  auto c = testing::allreduce_at(rank, seq, 1000 * int64_t(seq + 1));
  c.timing = Timing::cupti;
  return c;
}

// One rank's file in `dir`: the collectives it completed, those it lists in
// flight, and its process row.
std::string rank_file(const std::string& dir, int rank, int world_size,
                      const std::vector<CollectiveRecord>& completed,
                      const std::vector<InflightRecord>& inflight) {
  std::string file = dir + "/rank-" + std::to_string(rank) + ".db";
  store::RankWriter w(file, {{"kind", "rank"}, {"timeline", "monotonic"}});
  w.begin();
  for (const auto& c : completed) w.add(c);
  w.replace_inflight(inflight);
  ProcessRecord p;
  p.rank = rank;
  p.world_size = world_size;
  w.put(p);
  w.commit();
  w.close();
  return file;
}

InflightRecord in_flight(const CollectiveRecord& c, InflightState state) {
  return {c.rank,  c.comm_id, 0, c.nranks,        c.seq,     c.op, c.dtype,
          c.count, c.bytes,   0, c.host_start_ns, 1'000'000, state};
}

std::string merged(const std::string& dir, const std::vector<std::string>& files) {
  store::merge_rank_files(files, dir + "/run.db");
  return dir + "/run.db";
}

// Rank 0 completed collectives [0, done0) and lists [done0, done0 + waiting)
// enqueued; rank 1 completed [0, done1).
std::string stalled_run(const std::string& dir, uint64_t done0, uint64_t waiting, uint64_t done1) {
  std::vector<std::string> files;
  for (int rank : {0, 1}) {
    std::vector<CollectiveRecord> completed;
    for (uint64_t s = 0; s < (rank ? done1 : done0); ++s) completed.push_back(bucket(rank, s));
    std::vector<InflightRecord> inflight;
    for (uint64_t s = done0; rank == 0 && s < done0 + waiting; ++s)
      inflight.push_back(in_flight(bucket(0, s), InflightState::enqueued));
    files.push_back(rank_file(dir, rank, 2, completed, inflight));
  }
  return merged(dir, files);
}

}  // namespace

TEST_CASE("a collective the other ranks completed is not where the job stopped") {
  // Rank 0's records of collectives 2 and 3 are late (CUPTI keeps a buffer
  // until all its records are complete); rank 1 completed them and never
  // entered 4, which rank 0 waits in.
  auto dir = testing::temp_dir("late-records");
  store::RunReader reader(stalled_run(dir, 2, 4, 4));
  auto run = analysis::analyze_run(reader);
  REQUIRE(run.hangs.size() == 1);
  const auto& h = run.hangs[0];
  CHECK(h.seq == 4);
  CHECK(h.state == "enqueued");
  CHECK(h.waiting_ranks == std::vector<int>{0});
  CHECK(h.missing_ranks == std::vector<int>{1});
  CHECK(h.completed_ranks.empty());
}

TEST_CASE("a collective only some ranks completed is still where the job stopped") {
  // Rank 1 completed [0, 2) and never entered 2; rank 0 lists 2 and 3
  // enqueued. Nobody completed 2: the job stopped there.
  auto dir = testing::temp_dir("true-stall");
  store::RunReader reader(stalled_run(dir, 2, 2, 2));
  auto run = analysis::analyze_run(reader);
  REQUIRE(run.hangs.size() == 1);
  CHECK(run.hangs[0].seq == 2);
  CHECK(run.hangs[0].waiting_ranks == std::vector<int>{0});
  CHECK(run.hangs[0].missing_ranks == std::vector<int>{1});
}

namespace {

// Three ranks, 60 all-reduces each, rank 2 entering each 3 ms after the
// others; rank 0 then waits in a 61st that rank 1 completed and rank 2 never
// entered.
std::string late_and_stalled_run(const std::string& dir) {
  auto at = [](int rank, uint64_t seq) {
    auto c =
        testing::allreduce_at(rank, seq, 10'000'000 * int64_t(seq + 1) + (rank == 2) * 3'000'000);
    c.nranks = 3;
    return c;
  };
  std::vector<std::string> files;
  for (int rank : {0, 1, 2}) {
    std::vector<CollectiveRecord> completed;
    for (uint64_t s = 0; s < (rank == 1 ? 61u : 60u); ++s) completed.push_back(at(rank, s));
    std::vector<InflightRecord> inflight;
    if (rank == 0) inflight.push_back(in_flight(at(0, 60), InflightState::running));
    files.push_back(rank_file(dir, rank, 3, completed, inflight));
  }
  return merged(dir, files);
}

}  // namespace

TEST_CASE("a run read in two halves on two threads is analysed as when read whole") {
  auto dir = testing::temp_dir("split-read");
  store::RunReader reader(late_and_stalled_run(dir));
  auto whole = analysis::analyze_run(reader);
  auto halves = analysis::analyze_run(reader, {.split_read_rows = 1});
  REQUIRE(whole.ranks.size() == 3);
  CHECK(whole.ranks[2].late_ms_median == Approx(3.0));  // the straggler is seen
  REQUIRE(whole.hangs.size() == 1);
  CHECK(whole.hangs[0].seq == 60);
  REQUIRE(halves.ranks.size() == 3);
  for (size_t r = 0; r < 3; ++r) {
    CHECK(halves.ranks[r].collectives == whole.ranks[r].collectives);
    CHECK(halves.ranks[r].late_ms_median == whole.ranks[r].late_ms_median);
    CHECK(halves.ranks[r].last_share_pct == whole.ranks[r].last_share_pct);
  }
  REQUIRE(halves.ops.size() == whole.ops.size());
  CHECK(halves.ops[0].calls == whole.ops[0].calls);
  CHECK(halves.ops[0].median_us == whole.ops[0].median_us);
  CHECK(halves.iterations.count == whole.iterations.count);
  REQUIRE(halves.hangs.size() == 1);
  CHECK(halves.hangs[0].seq == 60);
  CHECK(halves.hangs[0].waiting_ranks == whole.hangs[0].waiting_ranks);
  CHECK(halves.hangs[0].completed_ranks == whole.hangs[0].completed_ranks);
  CHECK(halves.hangs[0].missing_ranks == whole.hangs[0].missing_ranks);
}
