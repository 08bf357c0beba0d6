// The store: what the writer puts in, the reader gives back; merge puts ranks
// on one timeline; bad files get one clear line.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>

#include "profiler/store/merge.h"
#include "profiler/store/reader.h"
#include "profiler/store/run_filter.h"
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

std::string write_rank(const std::string& dir, int rank, int64_t offset, int n,
                       std::map<std::string, std::string> meta = {}) {
  std::string path = dir + "/rank-" + std::to_string(rank) + ".db";
  meta.insert({{"kind", "rank"}, {"timeline", "monotonic"}, {"command_line", "train.py"}});
  RankWriter w(path, meta);
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

TEST_CASE("merge sums the injector's per-rank counts") {
  auto dir = testing::temp_dir("merge-counts");
  write_rank(dir, 0, 0, 1, {{"count:dropped_comm_events", "3"}, {"cupti_dropped_records", "5"}});
  write_rank(dir, 1, 0, 1, {{"count:dropped_comm_events", "4"}, {"count:names_overflowed", "2"}});
  merge_rank_files(find_rank_files(dir), dir + "/run.db");
  auto meta = RunReader(dir + "/run.db").meta();
  CHECK(meta.at("count:dropped_comm_events") == "7");
  CHECK(meta.at("count:names_overflowed") == "2");
  CHECK(meta.at("cupti_dropped_records") == "5");  // other keys: the first input's
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

TEST_CASE("a schema that fails midway leaves no table and no ddpscope marker") {
  auto dir = testing::temp_dir("schema-atomic");
  const std::string path = dir + "/half.db";
  {
    Connection c(path, Connection::Mode::create);
    // A table the schema creates late: its CREATE fails after the others ran.
    c.exec("CREATE TABLE nccl_kernel_channels(x);");
    CHECK_THROWS(create_schema(c));
  }
  Connection c(path, Connection::Mode::read_only);
  Statement tables(c, "SELECT group_concat(name) FROM sqlite_master WHERE type='table'");
  REQUIRE(tables.step());
  CHECK(tables.text(0) == "nccl_kernel_channels");
  Statement app(c, "PRAGMA application_id");
  REQUIRE(app.step());
  CHECK(app.int64(0) == 0);
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
    // A v5 file (before copy-engine collectives): it reads, without nccl_ce_ops.
    Connection c(dir + "/v5.db", Connection::Mode::create);
    create_schema(c);
    c.exec("DROP TABLE nccl_ce_ops; PRAGMA user_version=5");
  }
  {
    RunReader v5(dir + "/v5.db");
    CHECK(v5.schema_version() == 5);
    CHECK(v5.rows<NcclCeOpRecord>().empty());
    CHECK(v5.rows<NcclKernelChannelRecord>().empty());
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

TEST_CASE("a v3 rank file (plugin tables without v4's join keys) reads and merges") {
  auto dir = testing::temp_dir("v3");
  auto path = write_rank(dir, 0, 0, 2);
  {
    Connection c(path, Connection::Mode::read_write);
    c.exec(
        "INSERT INTO nccl_plugin_collectives(rank, comm_hash, seq, func, algo, proto, count) "
        "VALUES(0, 42, 0, 'AllReduce', 'RING', 'LL', 7);"
        "ALTER TABLE nccl_plugin_collectives DROP COLUMN comm_rank;"
        "ALTER TABLE nccl_plugin_collectives DROP COLUMN coll_key;"
        "ALTER TABLE nccl_plugin_collectives DROP COLUMN collective_id;"
        "ALTER TABLE nccl_plugin_comms DROP COLUMN comm_id;"
        "ALTER TABLE nccl_proxy_ops DROP COLUMN coll_key;"
        "ALTER TABLE nccl_proxy_steps DROP COLUMN coll_key;"
        "DROP TABLE nccl_kernel_channels; PRAGMA user_version=3;");
  }
  auto check_row = [](RunReader& r) {
    auto rows = r.rows<NcclPluginCollectiveRecord>();
    REQUIRE(rows.size() == 1);
    CHECK(rows[0].algo == "RING");
    CHECK(rows[0].comm_rank == -1);  // not known before v4
    CHECK(rows[0].coll_key == 0);
    CHECK(rows[0].collective_id == 0);
    CHECK(r.rows<NcclKernelChannelRecord>().empty());
  };
  {
    RunReader v3(path);
    CHECK(v3.schema_version() == 3);
    check_row(v3);
  }
  merge_rank_files({path}, dir + "/run.db");
  RunReader run(dir + "/run.db");
  CHECK(run.schema_version() == kSchemaVersion);
  CHECK(run.collectives().size() == 2);  // nothing joined or added from a file without keys
  check_row(run);
}

TEST_CASE("a filtered reader sees only the ranks and the time window asked for") {
  auto dir = testing::temp_dir("filter");
  merge_rank_files({write_rank(dir, 0, 0, 10), write_rank(dir, 1, 0, 10)}, dir + "/run.db");
  RunReader r(dir + "/run.db");
  r.set_filter(parse_run_filter("1", std::nullopt, std::nullopt, 0));
  auto procs = r.processes();
  REQUIRE(procs.size() == 1);
  CHECK(procs[0].rank == 1);
  auto colls = r.collectives();
  CHECK(colls.size() == 10);
  for (const auto& c : colls) CHECK(c.rank == 1);

  // Collectives start at 0, 1000, ..., 9000 ns: [2 µs, 5 µs) holds 3 per rank.
  r.set_filter(parse_run_filter("0-1", 2e-6, 5e-6, 0));
  CHECK(r.collectives().size() == 6);
  CHECK(r.processes().size() == 2);  // processes are not events: never cut by time
  r.set_filter({});
  CHECK(r.collectives().size() == 20);
}

TEST_CASE("report filters: each bad value is one line naming the flag") {
  auto error = [](const std::string& ranks, std::optional<double> since,
                  std::optional<double> until) {
    try {
      parse_run_filter(ranks, since, until, 0);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK_THAT(error("1,,2", {}, {}), Catch::StartsWith("--ranks 1,,2: '' is not a rank"));
  CHECK_THAT(error("3-1", {}, {}), Catch::Contains("range '3-1' is empty"));
  CHECK_THAT(error("x", {}, {}), Catch::Contains("'x' is not a rank"));
  CHECK_THAT(error("", -1.0, {}), Catch::StartsWith("--since: "));
  CHECK_THAT(error("", 5.0, 2.0), Catch::StartsWith("--until must be later than --since"));
  CHECK(error("0,2-4,2", 0.0, 1.0).empty());
  CHECK(parse_run_filter("0,2-4,2", {}, {}, 0).ranks == std::vector<int>{0, 2, 3, 4});
}

TEST_CASE("a plugin collective no hook call matched stays unjoined after the merge") {
  // Rank 1's ids are shifted past rank 0's: an unjoined row written as 0
  // would become rank 0's last collective.
  auto dir = testing::temp_dir("unjoined");
  auto first = write_rank(dir, 0, 0, 3);
  std::string path = dir + "/rank-1.db";
  {
    RankWriter w(path, {{"kind", "rank"}, {"timeline", "monotonic"}});
    w.begin();
    for (int i = 0; i < 3; ++i) w.add(sample(1, i, 1000 * i));
    NcclPluginCollectiveRecord p;
    p.rank = 1;
    p.comm_hash = 42;
    p.func = "AllReduce";
    p.count = 12345;  // no hook call of this count
    p.dtype = "ncclFloat32";
    p.comm_rank = 1;
    p.coll_key = 1;
    w.add(p);
    ProcessRecord proc;
    proc.rank = 1;
    proc.world_size = 2;
    w.put(proc);
    w.commit();
    w.close();
  }
  merge_rank_files({first, path}, dir + "/run.db");
  Connection run(dir + "/run.db", Connection::Mode::read_only);
  Statement s(run, "SELECT count(*), count(collective_id) FROM nccl_plugin_collectives");
  REQUIRE(s.step());
  CHECK(s.int64(0) == 1);
  CHECK(s.int64(1) == 0);
}
