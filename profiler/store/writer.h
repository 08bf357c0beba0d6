// The batched writer of one rank's file: prepared statements, one transaction
// per flush, WAL journaling so that every committed flush survives the process
// being killed. Used by the injector's writer thread and by tests. Any record
// type with a table (Row<Record>, table.h) can be added: rows are held per
// table and inserted kRowsPerInsert at a time.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "profiler/core/records.h"
#include "profiler/store/kernel_blocks.h"
#include "profiler/store/rows.h"
#include "profiler/store/sqlite.h"

namespace ddpscope::store {

class RankWriter {
 public:
  // Creates `path` (which must not exist yet, or be the empty file that
  // claimed the name) with the current schema and `meta`. On a network file
  // system (core/shared_fs.h) a rollback journal replaces the WAL.
  RankWriter(const std::string& path, const std::map<std::string, std::string>& meta);
  ~RankWriter();

  // One flush: everything between begin() and commit() lands atomically.
  void begin();
  template <typename Record>
  void add(const Record& r);
  void end_comm(int32_t rank, uint64_t comm_id, int32_t comm_rank, int64_t ended_ns, CommEnd how);
  void put(const ProcessRecord& p) { add(p); }  // the table replaces the process row
  // The rank's collectives in flight now, in place of those of the last flush.
  void replace_inflight(const std::vector<InflightRecord>& rows);
  void put_meta(const std::string& key, const std::string& value);
  // The journal mode chosen for this file: "wal", or "delete" on a network FS.
  const std::string& journal() const { return journal_; }
  void commit();

  // Folds the WAL back into the main file so one self-contained file remains.
  void close();

  const std::string& path() const { return path_; }

 private:
  // One multi-row INSERT runs the SQLite VM once per block instead of once
  // per row (the store's hot loop).
  static constexpr int kRowsPerInsert = 32;
  struct Batch {
    virtual ~Batch() = default;
    virtual void flush() = 0;
  };
  template <typename Record>
  struct TableBatch;
  template <typename Record>
  TableBatch<Record>& batch();
  static int next_slot();
  void flush_pending();

  std::string path_;
  std::string journal_ = "wal";
  std::unique_ptr<Connection> conn_;
  std::unique_ptr<Statement> meta_, comm_end_;
  std::vector<std::unique_ptr<Batch>> batches_;       // by table slot
  std::unique_ptr<KernelBlockWriter> kernel_blocks_;  // the kernels packed too
  std::unique_ptr<Transaction> tx_;
};

template <typename Record>
struct RankWriter::TableBatch : Batch {
  explicit TableBatch(Connection& c)
      : one(c, insert_sql(Row<Record>::table(), 1)),
        many(c, insert_sql(Row<Record>::table(), kRowsPerInsert)) {
    pending.reserve(kRowsPerInsert);
  }
  void add(const Record& r) {
    pending.push_back(r);
    if (int(pending.size()) < kRowsPerInsert) return;
    int columns = int(Row<Record>::table().columns.size());
    for (int i = 0; i < kRowsPerInsert; ++i) Row<Record>::bind(many, i * columns, pending[i]);
    many.run();
    pending.clear();
  }
  void flush() override {
    for (const auto& r : pending) {
      Row<Record>::bind(one, 0, r);
      one.run();
    }
    pending.clear();
  }
  Statement one, many;
  std::vector<Record> pending;
};

template <typename Record>
RankWriter::TableBatch<Record>& RankWriter::batch() {
  static const int slot = next_slot();
  if (int(batches_.size()) <= slot) batches_.resize(slot + 1);
  if (!batches_[slot]) batches_[slot] = std::make_unique<TableBatch<Record>>(*conn_);
  return static_cast<TableBatch<Record>&>(*batches_[slot]);
}

template <typename Record>
void RankWriter::add(const Record& r) {
  batch<Record>().add(r);
  if constexpr (std::is_same_v<Record, KernelRecord>) {
    if (!kernel_blocks_) kernel_blocks_ = std::make_unique<KernelBlockWriter>(*conn_);
    kernel_blocks_->add(r);
  }
}

}  // namespace ddpscope::store
