// The live window over rank files still being written (record/window.h,
// record/live_view.h): each refresh copies only what a file
// gained, rewritten tables replace their rows, old events slide out, and a
// file that cannot be read yet is read at the next refresh.
#include <catch2/catch.hpp>
#include <fstream>

#include "profiler/analysis/analyze.h"
#include "profiler/core/progress.h"
#include "profiler/store/kernel_block_reader.h"
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
  // trims its rows one by one and its blocks beside them, runs none.
  CHECK(count(dir + "/rank-0.db", "SELECT count(*) FROM sqlite_master WHERE type = 'trigger'") ==
        2);
  CHECK(count(window.path(), "SELECT count(*) FROM sqlite_master WHERE type = 'trigger'") == 0);
  file.w.close();
}

namespace {

// A kernel of rank 0 every 1 us from `first` (the n-th one 1 us long),
// compute and comm in turn, some of them a collective's; `untimed` has no
// start time (CUPTI lost it).
KernelRecord kernel_at(int64_t i, bool untimed = false) {
  return {.rank = 0,
          .device = 0,
          .stream = uint64_t(7 + i % 2),
          .name = i % 2 ? "ncclKernel_AllReduce" : "gemm_" + std::to_string(i % 5),
          .start_ns = untimed ? kNoTime : i * 1000,
          .end_ns = untimed ? kNoTime : i * 1000 + 1000,
          .correlation = uint64_t(100 + i),
          .collective_id = i % 4 == 1 ? 1 + i / 4 : 0,
          .kind = i % 2 ? KernelKind::comm : KernelKind::compute};
}

// The window's kernels as its table holds them and as its blocks decode, in
// rowid order: (start, end, stream, correlation, collective id, device, name,
// kind), kNoTime for NULL.
using KernelRow =
    std::tuple<int64_t, int64_t, uint64_t, uint64_t, int64_t, int, std::string, std::string>;
std::vector<KernelRow> table_rows(const std::string& db) {
  Connection c(db, Connection::Mode::read_only);
  Statement s(c,
              "SELECT start_ns, end_ns, stream, correlation, coalesce(collective_id, 0), device, "
              "name, kind FROM kernels ORDER BY rowid");
  std::vector<KernelRow> out;
  while (s.step())
    out.emplace_back(s.time(0), s.time(1), uint64_t(s.int64(2)), uint64_t(s.int64(3)), s.int64(4),
                     int(s.int64(5)), s.text(6), s.text(7));
  return out;
}
std::vector<KernelRow> block_rows(const std::string& db) {
  Connection c(db, Connection::Mode::read_only);
  Statement s(c,
              "SELECT rows, time_shift_ns, collective_base, data FROM kernel_blocks ORDER BY "
              "rowid");
  std::vector<KernelRow> out;
  KernelBlock b;
  while (s.step()) {
    REQUIRE(decode_kernel_block(s.blob_view(3), s.int64(0), s.int64(1), s.int64(2), b));
    for (const auto& k : b.rows)
      out.emplace_back(k.start_ns, k.end_ns, k.stream, k.correlation, k.collective_id, k.device,
                       b.names[k.name], std::string(name_of(k.kind)));
  }
  return out;
}

bool blocks_whole(const std::string& db) {
  RunReader reader(db);
  return kernel_blocks_whole(reader);
}

}  // namespace

// The window's analysis reads its kernels from their blocks, which it must
// keep as its trimmed table: a block the window's start cuts through is
// written again without the kernels before it, one wholly before it goes, a
// kernel without a start time stays in both.
TEST_CASE("the window trims its kernel blocks as its kernels rows, so that its blocks are read") {
  auto dir = testing::temp_dir("window-blocks");
  const int64_t offset = 1'000'000;
  LiveRankFile file(dir, 1, offset);
  file.w.begin();  // 6,000 kernels: blocks of 4,096 and 1,904
  for (int64_t i = 0; i < 6000; ++i) file.w.add(kernel_at(i, i == 10));
  file.w.put(file.p);
  file.w.commit();
  file.flush(0, 2);  // and a flush of collectives alone
  RecordingWindow window(dir, dir + "/window.db");
  window.refresh(INT64_MIN);
  CHECK(table_rows(window.path()).size() == 6000);
  CHECK(block_rows(window.path()) == table_rows(window.path()));
  CHECK(blocks_whole(window.path()));

  file.w.begin();  // more kernels while the window slides
  for (int64_t i = 6000; i < 6100; ++i) file.w.add(kernel_at(i));
  file.w.commit();
  window.refresh(offset + 2500 * 1000);  // through the first block
  auto rows = table_rows(window.path());
  CHECK(rows.size() == 6100 - 2500 + 1);  // the untimed kernel stays
  CHECK(block_rows(window.path()) == rows);
  CHECK(count(window.path(), "SELECT count(*) FROM kernel_blocks") == 3);
  CHECK(blocks_whole(window.path()));

  window.refresh(offset + 5000 * 1000);  // past the first block, into the second
  rows = table_rows(window.path());
  CHECK(rows.size() == 1100 + 1);
  CHECK(block_rows(window.path()) == rows);
  // The first block keeps its untimed kernel alone.
  CHECK(count(window.path(), "SELECT min(rows) FROM kernel_blocks") == 1);
  CHECK(blocks_whole(window.path()));
  file.w.close();
}

// A block that does not decode leaves the window, whose kernels are then read
// from its table (the truth), rather than the live view failing at each look.
TEST_CASE("a damaged kernel block in a live rank file leaves the window its kernels rows") {
  auto dir = testing::temp_dir("window-damaged-block");
  LiveRankFile file(dir, 1, 0);
  file.w.begin();
  for (int64_t i = 0; i < 5000; ++i) file.w.add(kernel_at(i));
  file.w.put(file.p);
  file.w.commit();
  {
    Connection c(dir + "/rank-0.db", Connection::Mode::read_write);
    c.exec("UPDATE kernel_blocks SET data = x'01' WHERE rowid = 1");  // no trigger on blocks
  }
  RecordingWindow window(dir, dir + "/window.db");
  REQUIRE_NOTHROW(window.refresh(INT64_MIN));
  CHECK(count(window.path(), "SELECT count(*) FROM kernel_blocks") == 1);
  CHECK(table_rows(window.path()).size() == 5000);
  CHECK_FALSE(blocks_whole(window.path()));
  REQUIRE_NOTHROW(window.refresh(4200 * 1000));  // the damaged block's rows slide out
  CHECK(table_rows(window.path()).size() == 800);
  CHECK(block_rows(window.path()) == table_rows(window.path()));
  CHECK(blocks_whole(window.path()));
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
