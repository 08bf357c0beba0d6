// The store: what the writer puts in, the reader gives back; merge puts ranks
// on one timeline; bad files get one clear line.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "profiler/store/merge.h"
#include "profiler/store/reader.h"
#include "profiler/store/schema.h"
#include "profiler/store/writer.h"
#include "tests/support/subprocess.h"

using namespace ddpscope;
using namespace ddpscope::store;

namespace {

CollectiveRecord sample(int rank, uint64_t seq, int64_t t) {
  CollectiveRecord c;
  c.rank = rank;
  c.comm_id = 0x7123456789abcdefull;
  c.comm_rank = rank;
  c.nranks = 2;
  c.seq = seq;
  c.op = Op::reduce_scatter;
  c.dtype = Dtype::bfloat16;
  c.redop = RedOp::avg;
  c.count = 1000 + seq;
  c.bytes = 2 * (1000 + seq) * 2;
  c.root = -1;
  c.peer = 3;
  c.stream = 0xdeadbeef;
  c.tid = 42;
  c.group_id = 9;
  c.host_start_ns = t;
  c.host_end_ns = t + 100;
  c.start_ns = t + 10;
  c.end_ns = t + 90;
  c.timing = Timing::event;
  return c;
}

std::string write_rank(const std::string& dir, int rank, int64_t offset, int n) {
  std::string path = dir + "/rank-" + std::to_string(rank) + ".db";
  RankWriter w(path, {{"kind", "rank"}, {"timeline", "monotonic"}, {"command_line", "train.py"}});
  w.begin();
  CommRecord comm;
  comm.rank = rank;
  comm.comm_id = 0x7123456789abcdefull;
  comm.nranks = 2;
  comm.comm_rank = rank;
  comm.backend = Backend::nccl;
  comm.origin = CommOrigin::init_rank;
  comm.created_ns = 5;
  w.add(comm);
  for (int i = 0; i < n; ++i) w.add(sample(rank, i, 1000 * i));
  ProcessRecord p;
  p.rank = rank;
  p.world_size = 2;
  p.host = "node" + std::to_string(rank);
  p.clock_offset_ns = offset;
  p.backend = Backend::nccl;
  w.put(p);
  w.commit();
  w.begin();
  w.end_comm(rank, comm.comm_id, rank, 777, CommEnd::abort);
  w.commit();
  w.close();
  return path;
}

void write_text(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a collective survives the round trip field by field") {
  auto dir = testing::temp_dir("roundtrip");
  auto path = write_rank(dir, 1, 0, 3);
  RunReader r(path);
  auto got = r.collectives();
  REQUIRE(got.size() == 3);
  auto want = sample(1, 2, 2000);
  auto& c = got[2];
  CHECK(c.rank == want.rank);
  CHECK(c.comm_id == want.comm_id);
  CHECK(c.seq == want.seq);
  CHECK(c.op == want.op);
  CHECK(c.dtype == want.dtype);
  CHECK(c.redop == want.redop);
  CHECK(c.count == want.count);
  CHECK(c.bytes == want.bytes);
  CHECK(c.peer == 3);
  CHECK(c.stream == want.stream);
  CHECK(c.tid == 42);
  CHECK(c.group_id == 9);
  CHECK(c.host_start_ns == want.host_start_ns);
  CHECK(c.end_ns == want.end_ns);
  CHECK(c.timing == Timing::event);
  auto comms = r.comms();
  REQUIRE(comms.size() == 1);
  CHECK(comms[0].end == CommEnd::abort);
  CHECK(comms[0].ended_ns == 777);
  CHECK(r.timeline() == "monotonic");
  // Closed cleanly: no WAL left beside the file.
  CHECK_FALSE(std::filesystem::exists(path + "-wal"));
}

TEST_CASE("merge shifts every rank onto wall time and renumbers") {
  auto dir = testing::temp_dir("merge");
  write_rank(dir, 0, 1'000'000, 2);
  write_rank(dir, 1, 5'000'000, 3);
  auto files = find_rank_files(dir);
  REQUIRE(files.size() == 2);
  auto s = merge_rank_files(files, dir + "/run.db");
  CHECK(s.ranks == 2);
  CHECK(s.collectives == 5);
  RunReader run(dir + "/run.db");
  CHECK(run.timeline() == "wall");
  auto r1 = run.collectives("rank = 1");
  REQUIRE(r1.size() == 3);
  CHECK(r1[1].host_start_ns == 1000 + 5'000'000);
  CHECK(r1[1].start_ns == 1010 + 5'000'000);
  auto procs = run.processes();
  REQUIRE(procs.size() == 2);
  CHECK(procs[1].host == "node1");
  CHECK(run.comms()[0].ended_ns == 777 + 1'000'000);
  // A merged file is not a rank file: merging it again is refused.
  CHECK_THAT(error_of([&] { merge_rank_files({dir + "/run.db"}, dir + "/again.db"); }),
             Catch::Contains("expected one process row"));
}

TEST_CASE("merge refuses two files claiming one rank and leaves nothing behind") {
  auto dir = testing::temp_dir("dup");
  auto a = write_rank(dir, 0, 0, 1);
  std::filesystem::create_directories(dir + "/other");
  auto b = write_rank(dir + "/other", 0, 0, 1);
  CHECK_THAT(error_of([&] {
               merge_rank_files({a, b}, dir + "/run.db");
             }),
             Catch::Contains("rank 0 is also claimed by"));
  CHECK_FALSE(std::filesystem::exists(dir + "/run.db"));
}

TEST_CASE("bad files are refused with one line naming them") {
  auto dir = testing::temp_dir("bad");
  write_text(dir + "/text.db", "this is not a database at all, just text\n");
  CHECK_THAT(error_of([&] { RunReader r(dir + "/text.db"); }),
             Catch::StartsWith(dir + "/text.db: not an SQLite database"));

  const std::string kDropPluginTables =
      "DROP TABLE nccl_plugin_comms; DROP TABLE nccl_plugin_collectives; "
      "DROP TABLE nccl_proxy_ops; DROP TABLE nccl_proxy_steps; ";
  {
    Connection c(dir + "/foreign.db", Connection::Mode::create);
    c.exec("CREATE TABLE t(x); INSERT INTO t VALUES(1);");
  }
  CHECK_THAT(error_of([&] { RunReader r(dir + "/foreign.db"); }),
             Catch::Contains("not one written by ddpscope"));

  {
    Connection c(dir + "/newer.db", Connection::Mode::create);
    create_schema(c);
    c.exec("PRAGMA user_version=" + std::to_string(kSchemaVersion + 1));
  }
  CHECK_THAT(error_of([&] { RunReader r(dir + "/newer.db"); }),
             Catch::Contains("upgrade ddpscope"));

  {
    // A v1 file (before DDP's own account): it reads, without those tables.
    Connection c(dir + "/v1.db", Connection::Mode::create);
    create_schema(c);
    c.exec("DROP TABLE ddp_info; DROP TABLE ddp_regions; " + kDropPluginTables +
           "PRAGMA user_version=1");
  }
  {
    RunReader v1(dir + "/v1.db");
    CHECK(v1.schema_version() == 1);
    CHECK(v1.rows<DdpInfoRecord>().empty());
    CHECK(v1.rows<DdpRegionRecord>().empty());
    CHECK(v1.rows<NcclPluginCollectiveRecord>().empty());
  }
  {
    // A v2 file (before NCCL's profiler plugin): it reads, without those tables.
    Connection c(dir + "/v2.db", Connection::Mode::create);
    create_schema(c);
    c.exec(kDropPluginTables + "PRAGMA user_version=2");
  }
  {
    RunReader v2(dir + "/v2.db");
    CHECK(v2.schema_version() == 2);
    CHECK(v2.rows<NcclPluginCommRecord>().empty());
    CHECK(v2.rows<NcclPluginCollectiveRecord>().empty());
    CHECK(v2.rows<NcclProxyOpRecord>().empty());
    CHECK(v2.rows<NcclProxyStepRecord>().empty());
  }

  {
    Connection c(dir + "/damaged.db", Connection::Mode::create);
    create_schema(c);
    c.exec("DROP TABLE collectives");
  }
  CHECK_THAT(error_of([&] { RunReader r(dir + "/damaged.db"); }),
             Catch::Contains("table 'collectives'"));

  CHECK_THAT(error_of([&] { RunReader r(dir + "/missing.db"); }), Catch::Contains("no such file"));
  CHECK_THAT(error_of([&] { RunReader r(dir); }), Catch::Contains("is a directory"));

  // Truncated in the middle: SQLite notices when the pages are read.
  auto good = write_rank(dir, 3, 0, 2000);
  std::filesystem::resize_file(good, std::filesystem::file_size(good) / 2);
  CHECK_FALSE(error_of([&] {
                RunReader r(good);
                r.collectives();
              }).empty());
}

TEST_CASE("the writer refuses to overwrite an existing file") {
  auto dir = testing::temp_dir("exists");
  write_text(dir + "/rank-0.db", "precious");
  CHECK_THAT(error_of([&] { RankWriter w(dir + "/rank-0.db", {}); }),
             Catch::Contains("already exists"));
}
