// The live window over rank files still being written (record/window.h,
// record/live_view.h): each refresh copies only what a file
// gained, rewritten tables replace their rows, old events slide out, and a
// file that cannot be read yet is read at the next refresh.
#include <catch2/catch.hpp>
#include <fstream>

#include "profiler/analysis/analyze.h"
#include "profiler/core/progress.h"
#include "profiler/store/reader.h"
#include "profiler/store/sqlite.h"
#include "profiler/store/writer.h"
#include "record/live_view.h"
#include "record/window.h"
#include "tests/support/records.h"
#include "tests/support/subprocess.h"

using namespace ddpscope;
using namespace ddpscope::store;
using ddpscope::record::RecordingWindow;

namespace {

int64_t count(const std::string& db, const std::string& sql) {
  Connection c(db, Connection::Mode::read_only);
  Statement s(c, sql);
  return s.step() ? s.int64(0) : -1;
}

// Rank 0's file as its writer keeps it while the job runs: each flush adds
// all-reduces `first` .. `first + n - 1`, 1 us apart, and rewrites the
// process row.
struct LiveRankFile {
  RankWriter w;
  ProcessRecord p;
  LiveRankFile(const std::string& dir, int world_size, int64_t clock_offset_ns)
      : w(dir + "/rank-0.db", {{"kind", "rank"}, {"timeline", "monotonic"}}) {
    p.rank = 0;
    p.world_size = world_size;
    p.clock_offset_ns = clock_offset_ns;
  }
  void flush(uint64_t first, uint64_t n, uint64_t dropped = 0) {
    w.begin();
    for (uint64_t s = first; s < first + n; ++s) {
      w.add(testing::allreduce_at(0, s, int64_t(s) * 1000));
      // An NVTX range beside each: a table the window has no (rank, time) index on.
      w.add(RangeRecord{0, 1, "", "step", int64_t(s) * 1000, int64_t(s) * 1000 + 500});
    }
    p.dropped_events = dropped;
    w.put(p);
    w.commit();
  }
};

}  // namespace

TEST_CASE("the window copies what a live rank file gained, once, and lets old events go") {
  auto dir = testing::temp_dir("window");
  LiveRankFile file(dir, 2, 1'000'000);
  file.flush(0, 3);
  RecordingWindow window(dir, dir + "/window.db");
  auto seen = window.refresh(INT64_MIN);
  CHECK(seen.files == 1);
  CHECK(seen.unreadable == 0);
  CHECK(seen.rows >= 3);
  CHECK(count(window.path(), "SELECT count(*) FROM collectives") == 3);

  file.flush(3, 2, 7);  // the writer still has the file open
  seen = window.refresh(INT64_MIN);
  CHECK(count(window.path(), "SELECT count(*) FROM collectives") == 5);  // none twice
  CHECK(count(window.path(), "SELECT count(*) FROM ranges") == 5);
  CHECK(count(window.path(), "SELECT count(*) FROM processes") == 1);
  CHECK(count(window.path(), "SELECT dropped_events FROM processes") == 7);
  // On the wall timeline: the rank's clock offset added.
  CHECK(count(window.path(), "SELECT min(host_start_ns) FROM collectives") == 1'000'000);

  window.refresh(1'000'000 + 3000);  // collectives 0..2 started before
  CHECK(count(window.path(), "SELECT count(*) FROM collectives") == 2);
  CHECK(count(window.path(), "SELECT min(seq) FROM collectives") == 3);
  CHECK(count(window.path(), "SELECT count(*) FROM ranges") == 2);
  // The rank file keeps kernel_blocks true by triggers; the window, which
  // trims rows one by one and holds no blocks, runs none.
  CHECK(count(dir + "/rank-0.db", "SELECT count(*) FROM sqlite_master WHERE type = 'trigger'") ==
        2);
  CHECK(count(window.path(), "SELECT count(*) FROM sqlite_master WHERE type = 'trigger'") == 0);
  file.w.close();
}

TEST_CASE("a rank file not yet readable is counted and read at the next refresh") {
  auto dir = testing::temp_dir("window-late");
  std::ofstream(dir + "/rank-1.db").close();  // the name claimed, nothing written yet
  RecordingWindow window(dir, dir + "/window.db");
  auto seen = window.refresh(INT64_MIN);
  CHECK(seen.files == 1);
  CHECK(seen.unreadable == 1);
}

namespace {
std::vector<std::string> g_reported;  // the stages the test's progress sink saw
void keep_stage(std::string_view stage, uint64_t, uint64_t) { g_reported.emplace_back(stage); }
}  // namespace

// record's live line owns the terminal's last row while the job runs; a
// progress line from the live view's analysis would land amid the job's
// output (the tmux test in tests/cli saw "analysis: collectives 1 of 680").
TEST_CASE("the live view's analysis draws no progress line, the same thread's later work does") {
  auto dir = testing::temp_dir("live-quiet");
  LiveRankFile(dir, 1, 0).flush(0, 4);
  g_reported.clear();
  core::progress::set_sink(keep_stage);
  {  // the analysis alone reports its stages: what the live view must hold back
    store::RunReader reader(dir + "/rank-0.db");
    analysis::analyze_run(reader);
  }
  CHECK_FALSE(g_reported.empty());
  g_reported.clear();
  ddpscope::record::LiveView view(dir, 60, dir + "/window.db");
  view.refresh(1'000'000'000);  // a window of 60 s ending 1 s into the run
  REQUIRE(view.last().window.ranks.size() == 1);
  CHECK(view.last().window.ranks[0].collectives == 4);
  CHECK(g_reported.empty());
  core::progress::update("after", 1, 2);  // the silence ends with the refresh
  core::progress::set_sink(nullptr);
  CHECK(g_reported == std::vector<std::string>{"after"});
}
