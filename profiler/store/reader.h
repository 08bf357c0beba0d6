// The one reader API over ddpscope databases (rank files and merged runs).
// Every consumer (merge, report, analysis, check) reads through it, so the
// schema's meaning lives in one place.
#pragma once

#include <climits>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "profiler/core/records.h"
#include "profiler/store/launch_account.h"
#include "profiler/store/placed_rank_file.h"
#include "profiler/store/rank_files.h"
#include "profiler/store/rows.h"
#include "profiler/store/sqlite.h"

namespace ddpscope::store {

// A part of a run to look at (`report --ranks`, `--since`, `--until`): every
// per-rank table read through the reader keeps only these ranks' rows, and
// every table of events (a `host_start_ns` or `start_ns` column; not
// `processes`) only rows that start inside [since_ns, until_ns) on the
// file's timeline. Rows without a start time are kept.
struct RunFilter {
  std::vector<int> ranks;  // empty: every rank
  int64_t since_ns = INT64_MIN, until_ns = INT64_MAX;
  bool all() const { return ranks.empty() && since_ns == INT64_MIN && until_ns == INT64_MAX; }
};

class RunReader {
 public:
  // Opens read-only and checks the schema; throws InputError (one line naming
  // the file) for a missing, foreign, corrupt or too-new file.
  explicit RunReader(const std::string& path);
  // A run's rank files read together, as their merge (merge.h) would hold
  // them, with what `record` knew beside them (launch_account.h), without
  // writing the merge: `dir` names the run. Each file is a part (parts()).
  RunReader(const std::string& dir, const std::vector<std::string>& rank_files,
            const LaunchAccount& launch);
  ~RunReader();

  const std::string& path() const { return path_; }
  std::map<std::string, std::string> meta();
  // "wall" for merged runs (every rank on one wall-clock timeline), "monotonic"
  // for a rank file (its own monotonic clock; add clock_offset_ns for wall time).
  std::string timeline();

  std::vector<ProcessRecord> processes();
  std::vector<CommRecord> comms();

  // Any table's rows as records (Row<Record>, table.h): `where` is an optional
  // SQL condition, `order` an optional ORDER BY list. Streams with bounded memory.
  template <typename Record>
  void for_each(const std::function<void(const Record&)>& fn, const std::string& where = "",
                const std::string& order = "");
  template <typename Record>
  std::vector<Record> rows(const std::string& where = "", const std::string& order = "");

  // Streams collectives in id order (bounded memory for large runs). `where` is
  // an optional SQL condition over the collectives table.
  void for_each_collective(const std::function<void(const CollectiveRecord&)>& fn,
                           const std::string& where = "");
  std::vector<CollectiveRecord> collectives(const std::string& where = "");
  int64_t count(const std::string& table);  // rows the filter keeps
  // The lowest and highest rowid of `table` (none when it is empty), by two
  // seeks: min() and max() in one SELECT scan a covering index whole.
  std::optional<std::pair<int64_t, int64_t>> rowid_range(const std::string& table);
  // Another reader of the same file, with the same filter, for a thread that
  // reads its own part of a table once: not memory-mapped, since mapped pages
  // count as the process's memory and reading them once is no faster. Of one
  // file only: rank files read together are read by parts().
  std::unique_ptr<RunReader> one_pass_beside() const;
  // Every shape of every collective but point-to-point ones (their numbers do
  // not pair ranks up), ordered by comm_id and seq: a seq with more than one
  // shape is a mismatch (docs/hangs.md).

  // The readers of single files that this one reads: itself, or for rank
  // files read together, one per file, each placed in the run, in the
  // merge's order (its rows' order in the merged run); `by_rank` in rank
  // order. SQL of one's own runs on each part's connection().
  std::vector<RunReader*> parts(bool by_rank = false);
  // The part that holds `rank`'s rows (itself for a single file).
  RunReader& part_of_rank(int rank);

  // True for rank files read together: SQL of one's own then runs on parts().
  bool several_files() const { return !conn_; }
  Connection& connection() {
    if (!conn_) throw std::logic_error("connection() of several files: use parts()");
    return *conn_;
  }
  int schema_version() const { return version_; }
  // The version the file itself was written with. A rank file placed among
  // others (report DIR) reads as the current schema through its views
  // (schema_version()), but its own tables, main.*, stay as it wrote them.
  int file_schema_version() const { return written_version_.value_or(version_); }

  void set_filter(RunFilter f);
  const RunFilter& filter() const { return filter_; }
  // How rows of `table` chosen by rank (a `where` of "rank = R ...", or the
  // filter's ranks) are ordered when no order is asked for: a run database
  // gives them through its (rank, time) index, a rank file has none, and
  // both must give one order. "" when the rows are not chosen by rank, or
  // the table has no such index: then rowid order, the same in both.
  std::string rank_order(const std::string& table, const std::string& where = "") const;
  // The filter's SQL condition for the table named, for a query of one's own
  // ("1" when it keeps everything): `... WHERE <cond> AND ` + where("kernels").
  std::string where(const std::string& table) const;

 private:
  // The filter's SQL condition for table `t` ("" when it keeps everything).
  std::string filter_sql(const TableSpec& t) const;

  RunReader() = default;
  // `check`: every table read once (a file opened before need not be).
  RunReader(const std::string& path, bool check);
  // A database already open (the launch account's, in memory).
  RunReader(std::unique_ptr<Connection> conn, const std::string& path);
  // A rank file to be placed among others, read in one transaction.
  static std::unique_ptr<RunReader> open_part(const std::string& path);
  static std::unique_ptr<RunReader> launch_part(const std::string& dir, const LaunchAccount& launch,
                                                const std::vector<RankFileHead>& heads);
  // Shifts this rank file's rows into the run (placed_rank_file.h).
  int64_t place(const Placement& p);
  // The parts an ORDER BY `order` reads in: by rank when it leads with rank,
  // else in the merge's order, right for id and rowid, and for rows of one
  // rank.
  std::vector<RunReader*> parts_for(const std::string& order, const std::string& where);

  std::string path_;
  std::unique_ptr<Connection> conn_;  // none when reading several files
  int version_ = 0;
  std::optional<int> written_version_;  // set by place(), before version_ reads as current
  RunFilter filter_;
  // Reading several files: the launch account's rows, then each file's.
  std::vector<std::unique_ptr<RunReader>> parts_;
  std::map<std::string, std::string> meta_;
  std::optional<Placement> placement_;
};

// A run.db or a single rank file, or a directory's rank files (merge.h's
// find_rank_files) read together with its launch account. InputError as the
// constructors say.
std::unique_ptr<RunReader> open_run(const std::string& path);

template <typename Record>
void RunReader::for_each(const std::function<void(const Record&)>& fn, const std::string& where,
                         const std::string& order) {
  if (!conn_) {
    for (RunReader* part : parts_for(order, where)) part->for_each<Record>(fn, where, order);
    return;
  }
  const TableSpec& t = Row<Record>::table();
  if (t.since_version > version_) return;  // an older file: the table is not there
  std::string sql = select_sql(t, version_);
  std::string filtered = filter_sql(t);
  if (!where.empty() && !filtered.empty())
    sql += " WHERE (" + where + ") AND " + filtered;
  else if (!where.empty() || !filtered.empty())
    sql += " WHERE " + where + filtered;
  // A placed file's ids are its own plus a base, in its rowids' order: a
  // sort by rowid is no sort at all, one by the shifted id a sort of them all.
  const std::string by = order.empty() ? rank_order(t.name, where) : order;
  if (!by.empty()) sql += " ORDER BY " + (placement_ && by == "id" ? "rowid" : by);
  Statement s(*conn_, sql);
  while (s.step()) fn(Row<Record>::read(s));
}

template <typename Record>
std::vector<Record> RunReader::rows(const std::string& where, const std::string& order) {
  std::vector<Record> out;
  for_each<Record>([&](const Record& r) { out.push_back(r); }, where, order);
  return out;
}

}  // namespace ddpscope::store
