// The parts of the hang diagnosis that read text written by others:
// faulthandler's dump of every thread, and record's rank-exits.tsv.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "profiler/analysis/hangs.h"
#include "profiler/core/input_error.h"
#include "profiler/store/launch_account.h"
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
