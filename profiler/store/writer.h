// The batched writer of one rank's file: prepared statements, one transaction
// per flush, WAL journaling so that every committed flush survives the process
// being killed. Used by the injector's writer thread and by the merge.
#pragma once

#include <map>
#include <memory>
#include <span>
#include <string>

#include "profiler/core/records.h"
#include "profiler/store/sqlite.h"

namespace ddpscope::store {

class RankWriter {
 public:
  // Creates `path` (which must not exist yet) with the v1 schema and `meta`.
  RankWriter(const std::string& path, const std::map<std::string, std::string>& meta);
  ~RankWriter();

  // Collectives keep the id they carry (CollectiveRecord::id > 0), so that
  // kernels written with them can name it; id 0 lets SQLite assign the next.
  // One flush: everything between begin() and commit() lands atomically.
  void begin();
  void add(const CollectiveRecord& c);
  void add(const CommRecord& c);
  void add(const KernelRecord& k);
  void add(const RangeRecord& r);
  void add(const SyncRecord& s);
  void end_comm(int32_t rank, uint64_t comm_id, int32_t comm_rank, int64_t ended_ns, CommEnd how);
  void put(const ProcessRecord& p);  // insert or replace the process row
  void put_meta(const std::string& key, const std::string& value);
  void commit();

  // Folds the WAL back into the main file so one self-contained file remains.
  void close();

  const std::string& path() const { return path_; }

 private:
  void flush_pending();
  struct Statements;
  std::string path_;
  std::unique_ptr<Connection> conn_;
  std::unique_ptr<Statements> st_;
  std::unique_ptr<Transaction> tx_;
};

}  // namespace ddpscope::store
