#include "profiler/store/writer.h"

#include <filesystem>

#include "profiler/core/shared_fs.h"
#include "profiler/store/schema.h"

namespace ddpscope::store {

RankWriter::RankWriter(const std::string& path, const std::map<std::string, std::string>& meta)
    : path_(path) {
  std::error_code ec;
  if (std::filesystem::exists(path) && std::filesystem::file_size(path, ec) != 0)
    throw InputError(path, "already exists");
  conn_ = std::make_unique<Connection>(path, Connection::Mode::create);
  // WAL: a committed flush is in the WAL before commit returns, so `kill -9`
  // loses at most the flush in progress.
  // synchronous=OFF: no fsync; the WAL is in the OS's hands at commit, which
  // is what surviving a killed process needs (an OS crash is out of scope).
  // Large pages and rare checkpoints: the injector's writes are append-only.
  // A 4 MiB page cache: appends touch only the right edge of each table and
  // index, and bench_store_throughput wrote as fast with 4 MiB as with 32
  // (docs/performance.md), which every rank process would otherwise hold.
  // On a network file system WAL cannot work (its index is shared memory):
  // a rollback journal there, with the lock held for the file's life (one
  // writer, nobody reads it before it is closed), so each flush costs no
  // lock round-trips to the server.
  bool network = core::on_network_fs(std::filesystem::path(path).parent_path().string());
  journal_ = network ? "delete" : "wal";
  conn_->exec(network ? "PRAGMA page_size=16384; PRAGMA locking_mode=EXCLUSIVE; "
                        "PRAGMA journal_mode=DELETE; PRAGMA synchronous=OFF; "
                        "PRAGMA cache_size=-4096;"
                      : "PRAGMA page_size=16384; PRAGMA journal_mode=WAL; PRAGMA synchronous=OFF; "
                        "PRAGMA wal_autocheckpoint=4096; PRAGMA cache_size=-4096;");
  create_schema(*conn_);
  meta_ =
      std::make_unique<Statement>(*conn_, "INSERT OR REPLACE INTO meta(key, value) VALUES(?,?)");
  comm_end_ = std::make_unique<Statement>(
      *conn_,
      "UPDATE comms SET ended_ns=?, end_reason=? WHERE rank=? AND comm_id=? AND comm_rank=?");
  begin();
  for (const auto& [k, v] : meta) put_meta(k, v);
  commit();
}

RankWriter::~RankWriter() {
  batches_.clear();
  kernel_blocks_.reset();
  meta_.reset();
  comm_end_.reset();
  tx_.reset();
}

int RankWriter::next_slot() {
  static std::atomic<int> slots{0};
  return slots.fetch_add(1);
}

void RankWriter::begin() { tx_ = std::make_unique<Transaction>(*conn_); }

void RankWriter::commit() {
  flush_pending();
  tx_->commit();
  tx_.reset();
}

void RankWriter::flush_pending() {
  for (auto& b : batches_)
    if (b) b->flush();
  if (kernel_blocks_) kernel_blocks_->flush();
}

// A communicator's row may still be pending in its batch: flush first.
void RankWriter::end_comm(int32_t rank, uint64_t comm_id, int32_t comm_rank, int64_t ended_ns,
                          CommEnd how) {
  flush_pending();
  auto& s = *comm_end_;
  s.bind_time(1, ended_ns);
  s.bind_text(2, name_of(how));
  s.bind(3, int64_t(rank));
  s.bind(4, int64_t(comm_id));
  s.bind(5, int64_t(comm_rank));
  s.run();
}

void RankWriter::replace_inflight(const std::vector<InflightRecord>& rows) {
  flush_pending();
  conn_->exec("DELETE FROM inflight");
  for (const auto& r : rows) add(r);
}

void RankWriter::put_meta(const std::string& key, const std::string& value) {
  auto& s = *meta_;
  s.bind_text(1, key);
  s.bind_text(2, value);
  s.run();
}

void RankWriter::close() {
  if (!conn_) return;
  tx_.reset();
  batches_.clear();
  kernel_blocks_.reset();
  meta_.reset();
  comm_end_.reset();
  // Closed: the merge's rule for "this rank is done" (merge.h).
  conn_->exec("INSERT OR REPLACE INTO meta(key, value) VALUES('closed', '1');");
  if (journal_ == "wal")
    conn_->exec("PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode=DELETE;");
  conn_.reset();
}

}  // namespace ddpscope::store
