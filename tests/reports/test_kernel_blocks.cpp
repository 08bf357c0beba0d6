// The kernels packed into blocks (profiler/store/kernel_blocks.h): every
// row as the kernels table holds it, in a rank file, a merged run and rank
// files read together; the report and the trace the same with them as
// without; a damaged block is bad input, blocks that miss rows are not read,
// and a row of kernels changed by SQL is what the report shows.
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <limits>

#include "profiler/analysis/analyze.h"
#include "profiler/store/kernel_block_reader.h"
#include "profiler/store/merge.h"
#include "profiler/store/writer.h"
#include "reports/renderer.h"
#include "tests/reports/gpu_run.h"
#include "tests/support/subprocess.h"

using namespace ddpscope;
using namespace ddpscope::testing;
namespace fs = std::filesystem;

namespace {

// The blocks' rows of every part of `reader`, as KernelRecords.
std::vector<KernelRecord> block_rows(store::RunReader& reader) {
  std::vector<KernelRecord> out;
  for (store::RunReader* part : reader.parts()) {
    REQUIRE(store::kernel_blocks_whole(*part));
    store::for_each_kernel_block(*part, INT64_MIN, INT64_MAX, [&](const store::KernelBlock& b) {
      for (const auto& k : b.rows)
        out.push_back({b.rank, k.device, k.stream, b.names[k.name], k.start_ns, k.end_ns,
                       k.correlation, k.collective_id, k.kind});
    });
  }
  return out;
}

// The table's rows the blocks stand for (those with a start time), in the
// blocks' order: rowid order, which rank_order gives by rank and time when
// the filter chooses ranks (then the blocks' rows are sorted the same way).
std::vector<KernelRecord> table_rows(store::RunReader& reader) {
  return reader.rows<KernelRecord>("start_ns IS NOT NULL");
}

void check_same(std::vector<KernelRecord> blocks, const std::vector<KernelRecord>& table,
                bool by_rank) {
  if (by_rank)
    std::stable_sort(blocks.begin(), blocks.end(), [](const auto& a, const auto& b) {
      return std::pair(a.rank, a.start_ns) < std::pair(b.rank, b.start_ns);
    });
  REQUIRE(blocks.size() == table.size());
  for (size_t i = 0; i < table.size(); ++i) {
    INFO("kernel " << i);
    CHECK(blocks[i].rank == table[i].rank);
    CHECK(blocks[i].device == table[i].device);
    CHECK(blocks[i].stream == table[i].stream);
    CHECK(blocks[i].name == table[i].name);
    CHECK(blocks[i].start_ns == table[i].start_ns);
    CHECK(blocks[i].end_ns == table[i].end_ns);
    CHECK(blocks[i].correlation == table[i].correlation);
    CHECK(blocks[i].collective_id == table[i].collective_id);
    CHECK(blocks[i].kind == table[i].kind);
  }
}

// Kernels at the edges of what a row holds: no start or end, the largest
// ids, negative collective ids (stored as none), names long, empty and with
// a NUL, two ranks interleaved, and more than a block's rows in one run.
void write_odd_kernels(const std::string& path) {
  store::RankWriter w(path, {{"kind", "rank"}, {"timeline", "monotonic"}});
  w.begin();
  const std::string names[] = {"", std::string("a\0b", 3), std::string(300, 'k'), "gemm"};
  for (int i = 0; i < 9000; ++i) {
    KernelRecord k;
    k.rank = i % 97 == 0 ? 5 : 4;
    k.device = i % 3 - 1;
    k.stream = i % 11 == 0 ? std::numeric_limits<uint64_t>::max() : uint64_t(i % 4);
    k.name = names[i % 4];
    k.start_ns = i % 13 == 0 ? kNoTime : 1'000'000'000 + int64_t(i) * 1'000 - (i % 5) * 7'000;
    k.end_ns = i % 17 == 0 ? kNoTime : k.start_ns + (i % 7) * 100;
    k.correlation = i % 19 == 0 ? std::numeric_limits<uint64_t>::max() : uint64_t(i * 3);
    k.collective_id = i % 23 == 0 ? -4 : i % 2 ? i / 2 : 0;
    k.kind = KernelKind(i % 4);
    w.add(k);
    if (i == 6000) {  // a flush in between: a block ends early
      w.commit();
      w.begin();
    }
  }
  w.commit();
  w.close();
}

// The JSON report and the Perfetto trace of `path`, as bytes.
std::pair<std::string, std::string> report_of(const std::string& path, const std::string& out,
                                              const store::RunFilter& filter = {}) {
  auto reader = store::open_run(path);
  reader->set_filter(filter);
  auto run = analysis::analyze_run(*reader);
  reports::make_json_renderer()->write({run, *reader}, out + ".json");
  reports::make_trace_renderer()->write({run, *reader}, out + ".pftrace");
  return {read_text(out + ".json"), read_text(out + ".pftrace")};
}

void exec(const std::string& path, const std::string& sql) {
  store::Connection c(path, store::Connection::Mode::read_write);
  c.exec(sql);
}

}  // namespace

TEST_CASE("Kernel blocks: every row as the kernels table holds it, in order") {
  const std::string dir = temp_dir("kernel-blocks-rows");
  SECTION("kernels at the edges of a row, in one rank file") {
    write_odd_kernels(dir + "/rank-4.db");
    store::RunReader reader(dir + "/rank-4.db");
    auto table = table_rows(reader);
    CHECK(table.size() > 8000);
    check_same(block_rows(reader), table, false);
  }
  SECTION("a GPU-like run: a rank file, the merged run, the rank files read together") {
    make_gpu_run(dir);
    for (const std::string& path : {dir + "/rank-2.db", dir + "/run.db", dir}) {
      INFO(path);
      auto reader = store::open_run(path);
      check_same(block_rows(*reader), table_rows(*reader), false);
      // A filter: ranks chosen and a window of time, as `report --ranks
      // --since --until` reads them.
      store::RunFilter f{.ranks = {1, 2}};
      auto all = table_rows(*reader);
      f.since_ns = all[all.size() / 4].start_ns;
      f.until_ns = all[all.size() / 2].start_ns;
      reader->set_filter(f);
      auto some = table_rows(*reader);
      CHECK(!some.empty());
      check_same(block_rows(*reader), some, true);
    }
  }
}

TEST_CASE("Kernel blocks: the report and the trace are byte for byte the same without them") {
  for (const bool together : {false, true}) {
    INFO((together ? "rank files read together" : "the merged run"));
    const std::string dir = temp_dir("kernel-blocks-report");
    make_gpu_run(dir);
    const std::string path = together ? dir : dir + "/run.db";
    auto [json, trace] = report_of(path, dir + "/out");
    // `report --ranks 1,3 --since --until`: the trace reads ranks in order
    const store::RunFilter some{.ranks = {1, 3}, .since_ns = 1'760'000'001'020'000'000};
    auto [some_json, some_trace] = report_of(path, dir + "/some", some);
    const auto files = store::find_rank_files(dir);
    for (const auto& f : files) exec(f, "DELETE FROM kernel_blocks");
    exec(dir + "/run.db", "DELETE FROM kernel_blocks");
    {  // every part with kernels reads its table now (the launch account's has none)
      auto reader = store::open_run(path);
      size_t from_table = 0;
      for (store::RunReader* part : reader->parts())
        from_table += !store::kernel_blocks_whole(*part);
      CHECK(from_table == (together ? files.size() : 1));
    }
    auto [json2, trace2] = report_of(path, dir + "/out");
    CHECK(json.size() > 1000);
    CHECK(json == json2);
    CHECK(trace.size() > 10000);
    CHECK(trace == trace2);
    auto [some_json2, some_trace2] = report_of(path, dir + "/some", some);
    CHECK(some_json == some_json2);
    CHECK(some_trace.size() > 1000);
    CHECK(some_trace == some_trace2);
  }
}

TEST_CASE("Kernel blocks: a damaged one is bad input, and blocks that miss rows are not read") {
  const std::string dir = temp_dir("kernel-blocks-damage");
  make_gpu_run(dir);
  const std::string run = dir + "/run.db";
  auto [json, trace] = report_of(run, dir + "/intact");
  SECTION("a block's bytes cut short") {
    exec(run, "UPDATE kernel_blocks SET data = substr(data, 1, length(data) - 3) WHERE rowid = 2");
    store::RunReader reader(run);
    CHECK_THROWS_WITH(analysis::analyze_run(reader),
                      Catch::Contains(run) && Catch::Contains("damaged row of kernel_blocks"));
    CHECK_THROWS_AS(report_of(run, dir + "/damaged"), InputError);
    CHECK(!fs::exists(dir + "/damaged.pftrace"));
  }
  SECTION("a block whose row count is not its bytes'") {
    exec(run,
         "UPDATE kernel_blocks SET rows = rows + 1 WHERE rowid = 1; "
         "UPDATE kernel_blocks SET rows = rows - 1 WHERE rowid = 3");
    store::RunReader reader(run);
    CHECK(store::kernel_blocks_whole(reader));
    CHECK_THROWS_AS(analysis::analyze_run(reader), InputError);
  }
  SECTION("a block gone: the table is read, and the report is the same") {
    exec(run, "DELETE FROM kernel_blocks WHERE rowid = 2");
    store::RunReader reader(run);
    CHECK(!store::kernel_blocks_whole(reader));
    auto [json2, trace2] = report_of(run, dir + "/missing");
    CHECK(json == json2);
    CHECK(trace == trace2);
  }
}

// The kernels table is the truth users' SQL edits (say, names scrubbed
// before a file is shared): a row changed or deleted empties the blocks
// (schema v9's triggers), so the report shows the edit; a file of schema v8,
// whose blocks had no such triggers, is read from its table.
TEST_CASE("Kernel blocks: kernels changed by SQL are what the report shows") {
  const std::string dir = temp_dir("kernel-blocks-edited");
  make_gpu_run(dir);
  const std::string run = dir + "/run.db";
  auto renamed = [&](const std::string& path) {
    auto reader = store::open_run(path);
    return reader->rows<KernelRecord>("name = 'scrubbed'").size();
  };
  // In the trace as JSON (the Perfetto one is deflated): a kernel's slice.
  auto shown = [&](const std::string& path, const std::string& out) {
    auto reader = store::open_run(path);
    auto analysis = analysis::analyze_run(*reader);
    reports::make_trace_renderer()->write({analysis, *reader}, out + ".trace.json");
    return read_text(out + ".trace.json").find("\"name\":\"scrubbed\"") != std::string::npos;
  };
  CHECK(!shown(run, dir + "/before"));
  SECTION("a merged run: rows renamed") {
    exec(run, "UPDATE kernels SET name = 'scrubbed' WHERE kind = 'compute'");
    store::RunReader reader(run);
    CHECK(!store::kernel_blocks_whole(reader));
    CHECK(reader.count("kernel_blocks") == 0);
    CHECK(renamed(run) > 0);
    CHECK(shown(run, dir + "/renamed"));
  }
  SECTION("a rank file: a row deleted and another inserted, the count unchanged") {
    const std::string rank = dir + "/rank-1.db";
    exec(rank,
         "DELETE FROM kernels WHERE rowid = (SELECT min(rowid) FROM kernels); "
         "INSERT INTO kernels(rank, device, stream, name, start_ns, end_ns, correlation, kind) "
         "SELECT rank, device, stream, 'scrubbed', start_ns, end_ns, correlation, 'compute' "
         "FROM kernels LIMIT 1");
    store::RunReader reader(rank);
    CHECK(!store::kernel_blocks_whole(reader));
    CHECK(shown(dir, dir + "/together"));
  }
  SECTION("rank files of schema v8 read together: their tables, whole") {
    auto [json, trace] = report_of(dir, dir + "/v9");
    for (const auto& f : store::find_rank_files(dir)) exec(f, "PRAGMA user_version = 8");
    auto reader = store::open_run(dir);
    size_t stamped = 0;
    for (store::RunReader* part : reader->parts()) {  // but the launch account's
      if (part->count("kernels") == 0) continue;
      stamped += part->file_schema_version() == 8;
      CHECK(!store::kernel_blocks_whole(*part));
    }
    CHECK(stamped == store::find_rank_files(dir).size());
    auto [json8, trace8] = report_of(dir, dir + "/v8");
    CHECK(json8 == json);
    CHECK(trace8 == trace);
  }
  SECTION("a file of schema v8: its table, not its blocks") {
    exec(run,
         "DROP TRIGGER kernel_blocks_on_update; "
         "UPDATE kernels SET name = 'scrubbed' WHERE kind = 'compute'; PRAGMA user_version = 8");
    store::RunReader reader(run);
    CHECK(reader.count("kernel_blocks") > 0);  // stale: the trigger was not there
    CHECK(!store::kernel_blocks_whole(reader));
    CHECK(shown(run, dir + "/v8"));
  }
}
