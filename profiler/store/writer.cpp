#include "profiler/store/writer.h"

#include <filesystem>

#include "profiler/store/schema.h"

namespace ddpscope::store {

struct RankWriter::Statements {
  Statement collective;
  Statement comm;
  Statement comm_end;
  Statement process;
  Statement meta;
  explicit Statements(Connection& c)
      : collective(c,
                   "INSERT INTO collectives(rank, comm_id, seq, op, dtype, count, bytes, root, "
                   "peer, stream, tid, group_id, host_start_ns, host_end_ns, start_ns, end_ns, "
                   "timing, comm_rank, nranks, redop) "
                   "VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"),
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
        meta(c, "INSERT OR REPLACE INTO meta(key, value) VALUES(?,?)") {}
};

RankWriter::RankWriter(const std::string& path, const std::map<std::string, std::string>& meta)
    : path_(path) {
  if (std::filesystem::exists(path)) throw StoreError(path, "already exists");
  conn_ = std::make_unique<Connection>(path, Connection::Mode::create);
  // WAL + synchronous=NORMAL: a committed flush is in the WAL before commit
  // returns, so `kill -9` loses at most the flush in progress.
  conn_->exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;");
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
  tx_->commit();
  tx_.reset();
}

void RankWriter::add(const CollectiveRecord& c) {
  auto& s = st_->collective;
  s.bind(1, int64_t(c.rank));
  s.bind(2, int64_t(c.comm_id));
  s.bind(3, int64_t(c.seq));
  s.bind_text(4, name_of(c.op));
  s.bind_text(5, name_of(c.dtype));
  s.bind(6, int64_t(c.count));
  s.bind(7, int64_t(c.bytes));
  s.bind(8, int64_t(c.root));
  s.bind(9, int64_t(c.peer));
  s.bind(10, int64_t(c.stream));
  s.bind(11, int64_t(c.tid));
  s.bind(12, int64_t(c.group_id));
  s.bind_time(13, c.host_start_ns);
  s.bind_time(14, c.host_end_ns);
  s.bind_time(15, c.start_ns);
  s.bind_time(16, c.end_ns);
  s.bind_text(17, name_of(c.timing));
  s.bind(18, int64_t(c.comm_rank));
  s.bind(19, int64_t(c.nranks));
  s.bind_text(20, name_of(c.redop));
  s.run();
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
