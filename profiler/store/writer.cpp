#include "profiler/store/writer.h"

#include <filesystem>
#include <vector>

#include "profiler/store/schema.h"

namespace ddpscope::store {

// Collectives go in kRowsPerInsert at a time: one multi-row INSERT runs the
// SQLite VM once per block instead of once per row (the store's hot loop).
constexpr int kRowsPerInsert = 32;
constexpr int kCollectiveColumns = 21;
constexpr const char* kCollectiveInsert =
    "INSERT INTO collectives(rank, comm_id, seq, op, dtype, count, bytes, root, peer, stream, "
    "tid, group_id, host_start_ns, host_end_ns, start_ns, end_ns, timing, comm_rank, nranks, "
    "redop, id) VALUES";

std::string collective_insert(int rows) {
  std::string row = "(?";
  for (int i = 1; i < kCollectiveColumns; ++i) row += ",?";
  row += ")";
  std::string sql = kCollectiveInsert;
  for (int r = 0; r < rows; ++r) sql += (r ? "," : "") + row;
  return sql;
}

struct RankWriter::Statements {
  Statement collective;
  Statement collectives;  // kRowsPerInsert rows
  Statement comm;
  Statement comm_end;
  Statement process;
  Statement meta;
  Statement kernel;
  Statement range;
  Statement sync;
  std::vector<CollectiveRecord> pending;
  explicit Statements(Connection& c)
      : collective(c, collective_insert(1)),
        collectives(c, collective_insert(kRowsPerInsert)),
        comm(c,
             "INSERT OR REPLACE INTO comms(rank, comm_id, comm_rank, nranks, device, backend, "
             "parent_comm_id, origin, created_ns, ended_ns, end_reason) "
             "VALUES(?,?,?,?,?,?,?,?,?,?,?)"),
        comm_end(c,
                 "UPDATE comms SET ended_ns=?, end_reason=? "
                 "WHERE rank=? AND comm_id=? AND comm_rank=?"),
        process(c,
                "INSERT OR REPLACE INTO processes(rank, world_size, local_rank, host, pid, "
                "device, backend, clock_offset_ns, dropped_events, rank_source, start_ns, end_ns) "
                "VALUES(?,?,?,?,?,?,?,?,?,?,?,?)"),
        meta(c, "INSERT OR REPLACE INTO meta(key, value) VALUES(?,?)"),
        kernel(c,
               "INSERT INTO kernels(rank, device, stream, name, start_ns, end_ns, correlation, "
               "collective_id, kind) VALUES(?,?,?,?,?,?,?,?,?)"),
        range(c,
              "INSERT INTO ranges(rank, tid, domain, name, start_ns, end_ns) "
              "VALUES(?,?,?,?,?,?)"),
        sync(c,
             "INSERT INTO syncs(rank, tid, call, stream, start_ns, end_ns) "
             "VALUES(?,?,?,?,?,?)") {
    pending.reserve(kRowsPerInsert);
  }
};

namespace {

// Binds one collective as row `row` (0-based) of a (multi-row) insert.
void bind_collective(Statement& s, int row, const CollectiveRecord& c) {
  int b = row * kCollectiveColumns;
  s.bind(b + 1, int64_t(c.rank));
  s.bind(b + 2, int64_t(c.comm_id));
  s.bind(b + 3, int64_t(c.seq));
  s.bind_text(b + 4, name_of(c.op));
  s.bind_text(b + 5, name_of(c.dtype));
  s.bind(b + 6, int64_t(c.count));
  s.bind(b + 7, int64_t(c.bytes));
  s.bind(b + 8, int64_t(c.root));
  s.bind(b + 9, int64_t(c.peer));
  s.bind(b + 10, int64_t(c.stream));
  s.bind(b + 11, int64_t(c.tid));
  s.bind(b + 12, int64_t(c.group_id));
  s.bind_time(b + 13, c.host_start_ns);
  s.bind_time(b + 14, c.host_end_ns);
  s.bind_time(b + 15, c.start_ns);
  s.bind_time(b + 16, c.end_ns);
  s.bind_text(b + 17, name_of(c.timing));
  s.bind(b + 18, int64_t(c.comm_rank));
  s.bind(b + 19, int64_t(c.nranks));
  s.bind_text(b + 20, name_of(c.redop));
  if (c.id > 0)
    s.bind(b + 21, c.id);
  else
    s.bind_null(b + 21);
}

}  // namespace

RankWriter::RankWriter(const std::string& path, const std::map<std::string, std::string>& meta)
    : path_(path) {
  if (std::filesystem::exists(path)) throw StoreError(path, "already exists");
  conn_ = std::make_unique<Connection>(path, Connection::Mode::create);
  // WAL: a committed flush is in the WAL before commit returns, so `kill -9`
  // loses at most the flush in progress.
  // synchronous=OFF: no fsync; the WAL is in the OS's hands at commit, which
  // is what surviving a killed process needs (an OS crash is out of scope).
  // Large pages and rare checkpoints: the injector's writes are append-only.
  conn_->exec(
      "PRAGMA page_size=16384; PRAGMA journal_mode=WAL; PRAGMA synchronous=OFF; "
      "PRAGMA wal_autocheckpoint=4096; PRAGMA cache_size=-32768;");
  create_schema(*conn_);
  st_ = std::make_unique<Statements>(*conn_);
  begin();
  for (const auto& [k, v] : meta) put_meta(k, v);
  commit();
}

RankWriter::~RankWriter() {
  st_.reset();
  tx_.reset();
}

void RankWriter::begin() { tx_ = std::make_unique<Transaction>(*conn_); }

void RankWriter::commit() {
  flush_pending();
  tx_->commit();
  tx_.reset();
}

void RankWriter::add(const CollectiveRecord& c) {
  auto& pending = st_->pending;
  pending.push_back(c);
  if (int(pending.size()) < kRowsPerInsert) return;
  for (int r = 0; r < kRowsPerInsert; ++r) bind_collective(st_->collectives, r, pending[r]);
  st_->collectives.run();
  pending.clear();
}

void RankWriter::flush_pending() {
  for (const auto& c : st_->pending) {
    bind_collective(st_->collective, 0, c);
    st_->collective.run();
  }
  st_->pending.clear();
}

void RankWriter::add(const CommRecord& c) {
  auto& s = st_->comm;
  s.bind(1, int64_t(c.rank));
  s.bind(2, int64_t(c.comm_id));
  s.bind(3, int64_t(c.comm_rank));
  s.bind(4, int64_t(c.nranks));
  s.bind(5, int64_t(c.device));
  s.bind_text(6, name_of(c.backend));
  s.bind(7, int64_t(c.parent_comm_id));
  s.bind_text(8, name_of(c.origin));
  s.bind_time(9, c.created_ns);
  s.bind_time(10, c.ended_ns);
  s.bind_text(11, name_of(c.end));
  s.run();
}

void RankWriter::add(const KernelRecord& k) {
  auto& s = st_->kernel;
  s.bind(1, int64_t(k.rank));
  s.bind(2, int64_t(k.device));
  s.bind(3, int64_t(k.stream));
  s.bind_text(4, k.name);
  s.bind_time(5, k.start_ns);
  s.bind_time(6, k.end_ns);
  s.bind(7, int64_t(k.correlation));
  if (k.collective_id > 0)
    s.bind(8, k.collective_id);
  else
    s.bind_null(8);
  s.bind_text(9, name_of(k.kind));
  s.run();
}

void RankWriter::add(const RangeRecord& r) {
  auto& s = st_->range;
  s.bind(1, int64_t(r.rank));
  s.bind(2, int64_t(r.tid));
  s.bind_text(3, r.domain);
  s.bind_text(4, r.name);
  s.bind_time(5, r.start_ns);
  s.bind_time(6, r.end_ns);
  s.run();
}

void RankWriter::add(const SyncRecord& r) {
  auto& s = st_->sync;
  s.bind(1, int64_t(r.rank));
  s.bind(2, int64_t(r.tid));
  s.bind_text(3, name_of(r.call));
  s.bind(4, int64_t(r.stream));
  s.bind_time(5, r.start_ns);
  s.bind_time(6, r.end_ns);
  s.run();
}

void RankWriter::end_comm(int32_t rank, uint64_t comm_id, int32_t comm_rank, int64_t ended_ns,
                          CommEnd how) {
  auto& s = st_->comm_end;
  s.bind_time(1, ended_ns);
  s.bind_text(2, name_of(how));
  s.bind(3, int64_t(rank));
  s.bind(4, int64_t(comm_id));
  s.bind(5, int64_t(comm_rank));
  s.run();
}

void RankWriter::put(const ProcessRecord& p) {
  auto& s = st_->process;
  s.bind(1, int64_t(p.rank));
  s.bind(2, int64_t(p.world_size));
  s.bind(3, int64_t(p.local_rank));
  s.bind_text(4, p.host);
  s.bind(5, p.pid);
  s.bind(6, int64_t(p.device));
  s.bind_text(7, name_of(p.backend));
  s.bind(8, p.clock_offset_ns);
  s.bind(9, int64_t(p.dropped_events));
  s.bind_text(10, p.rank_source);
  s.bind_time(11, p.start_ns);
  s.bind_time(12, p.end_ns);
  s.run();
}

void RankWriter::put_meta(const std::string& key, const std::string& value) {
  auto& s = st_->meta;
  s.bind_text(1, key);
  s.bind_text(2, value);
  s.run();
}

void RankWriter::close() {
  if (!conn_) return;
  tx_.reset();
  st_.reset();
  conn_->exec("PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode=DELETE;");
  conn_.reset();
}

}  // namespace ddpscope::store
