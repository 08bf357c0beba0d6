#include "profiler/store/schema.h"

namespace ddpscope::store {
namespace {

constexpr const char* kTables = R"sql(
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE processes(
  rank INTEGER PRIMARY KEY, world_size INTEGER, local_rank INTEGER, host TEXT, pid INTEGER,
  device INTEGER, backend TEXT, clock_offset_ns INTEGER, dropped_events INTEGER,
  rank_source TEXT, start_ns INTEGER, end_ns INTEGER);
CREATE TABLE comms(
  rank INTEGER, comm_id INTEGER, comm_rank INTEGER, nranks INTEGER, device INTEGER,
  backend TEXT, parent_comm_id INTEGER, origin TEXT, created_ns INTEGER, ended_ns INTEGER,
  end_reason TEXT, PRIMARY KEY(rank, comm_id, comm_rank));
CREATE TABLE collectives(
  id INTEGER PRIMARY KEY, rank INTEGER, comm_id INTEGER, seq INTEGER, op TEXT, dtype TEXT,
  count INTEGER, bytes INTEGER, root INTEGER, peer INTEGER, stream INTEGER, tid INTEGER,
  group_id INTEGER, host_start_ns INTEGER, host_end_ns INTEGER, start_ns INTEGER,
  end_ns INTEGER, timing TEXT, comm_rank INTEGER, nranks INTEGER, redop TEXT);
CREATE TABLE kernels(
  rank INTEGER, device INTEGER, stream INTEGER, name TEXT, start_ns INTEGER, end_ns INTEGER,
  correlation INTEGER, collective_id INTEGER, kind TEXT);
CREATE TABLE ranges(
  rank INTEGER, tid INTEGER, domain TEXT, name TEXT, start_ns INTEGER, end_ns INTEGER);
CREATE TABLE syncs(
  rank INTEGER, tid INTEGER, call TEXT, stream INTEGER, start_ns INTEGER, end_ns INTEGER);
CREATE TABLE tune_runs(
  id INTEGER PRIMARY KEY, started TEXT, workload TEXT, workload_bytes INTEGER, params INTEGER,
  host TEXT, command_line TEXT, warmup INTEGER, iters INTEGER, first_bucket_mb REAL,
  recommendation TEXT);
CREATE TABLE tune_results(
  run_id INTEGER, backend TEXT, topology TEXT, nranks INTEGER, bucket_mb REAL,
  first_bucket_mb REAL, buckets INTEGER, iteration INTEGER, iter_ms REAL, comm_ms REAL,
  exposed_ms REAL);
)sql";

constexpr const char* kIndexes = R"sql(
CREATE INDEX IF NOT EXISTS collectives_by_comm ON collectives(comm_id, seq, rank);
CREATE INDEX IF NOT EXISTS collectives_by_rank ON collectives(rank, host_start_ns);
CREATE INDEX IF NOT EXISTS kernels_by_rank ON kernels(rank, start_ns);
)sql";

int pragma_int(Connection& conn, const char* pragma) {
  Statement st(conn, std::string("PRAGMA ") + pragma);
  return st.step() ? int(st.int64(0)) : 0;
}

}  // namespace

void create_schema(Connection& conn) {
  conn.exec(kTables);
  conn.exec("PRAGMA application_id=" + std::to_string(kApplicationId));
  conn.exec("PRAGMA user_version=" + std::to_string(kSchemaVersion));
}

void create_indexes(Connection& conn) { conn.exec(kIndexes); }

void check_schema(Connection& conn) {
  int app = 0;
  try {
    app = pragma_int(conn, "application_id");
  } catch (const StoreError&) {
    // SQLite reports "file is not a database" on the first read of a foreign file.
    throw StoreError(conn.path(), "not an SQLite database (is this a ddpscope .db file?)");
  }
  if (app != kApplicationId)
    throw StoreError(conn.path(), "an SQLite database, but not one written by ddpscope");
  int version = pragma_int(conn, "user_version");
  if (version > kSchemaVersion)
    throw StoreError(conn.path(), "written with ddpscope schema v" + std::to_string(version) +
                                      ", this ddpscope reads up to v" +
                                      std::to_string(kSchemaVersion) + ": upgrade ddpscope");
  if (version < 1)
    throw StoreError(conn.path(), "ddpscope database without a schema version (damaged file?)");
}

}  // namespace ddpscope::store
