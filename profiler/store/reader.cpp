#include "profiler/store/reader.h"

#include <sqlite3.h>
#include <sys/resource.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <string_view>

#include "profiler/core/parallel.h"
#include "profiler/core/progress.h"
#include "profiler/store/merge.h"
#include "profiler/store/rank_files.h"
#include "profiler/store/schema.h"

namespace ddpscope::store {
namespace {

// Every table must be present with its columns and readable: a truncated,
// damaged or hand-edited file fails here with one line instead of half-way
// through a report.
void check_tables(Connection& conn, int version) {
  std::vector<std::pair<const char*, std::string>> queries{{"meta", "SELECT key, value FROM meta"}};
  for (const TableSpec* t : tables())
    if (t->since_version <= version) queries.emplace_back(t->name, select_sql(*t, version));
  for (const auto& [name, select] : queries) {
    try {
      Statement columns(conn, select + " LIMIT 0");  // prepared: every column exists
      Statement st(conn, std::string("SELECT count(*) FROM ") + name);
      st.step();
    } catch (const InputError&) {
      throw InputError(conn.path(), std::string("damaged ddpscope database: table '") + name +
                                        "' is missing, lacks columns or is unreadable");
    }
  }
}

// A connection is an open file per rank file, and the soft limit on open
// files is often 1,024: raised toward the hard limit, which needs no
// privilege. Where even that is too low, the open that fails names its file.
void allow_open_files(size_t files) {
  rlimit l{};
  const rlim_t want = rlim_t(files) + 64;  // and the process's own
  if (getrlimit(RLIMIT_NOFILE, &l) != 0 || l.rlim_cur >= want) return;
  l.rlim_cur = l.rlim_max == RLIM_INFINITY ? want : std::min(want, l.rlim_max);
  setrlimit(RLIMIT_NOFILE, &l);
}

// R of a `where` that reads "rank = R" or "rank = R AND ...": its rows are
// one rank's.
std::optional<int> rank_chosen(const std::string& where) {
  constexpr std::string_view kPrefix = "rank = ";
  if (where.rfind(kPrefix, 0) != 0) return std::nullopt;
  const char* last = where.data() + where.size();
  int rank = 0;
  auto [end, ec] = std::from_chars(where.data() + kPrefix.size(), last, rank);
  if (ec != std::errc() || (end != last && *end != ' ')) return std::nullopt;
  return rank;
}

}  // namespace

RunReader::RunReader(const std::string& path) : RunReader(path, true) {}

RunReader::RunReader(const std::string& path, bool check) : path_(path) {
  if (!std::filesystem::exists(path)) throw InputError(path, "no such file");
  if (std::filesystem::is_directory(path))
    throw InputError(path, "is a directory (give the run.db inside it)");
  conn_ = std::make_unique<Connection>(path, Connection::Mode::read_only);
  version_ = check_schema(*conn_);
  // Reports scan whole tables: memory-mapped reads skip a copy per page (the
  // pages are the OS's file cache, not our heap).
  conn_->exec("PRAGMA mmap_size=4294967296");
  if (check) check_tables(*conn_, version_);
}

RunReader::RunReader(std::unique_ptr<Connection> conn, const std::string& path)
    : path_(path), conn_(std::move(conn)), version_(check_schema(*conn_)) {}

RunReader::RunReader(const std::string& dir, const std::vector<std::string>& rank_files,
                     const LaunchAccount& launch)
    : path_(dir) {
  if (rank_files.empty()) throw InputError(dir, "no rank-*.db files in it");
  // SQLite counts every allocation under one process-wide mutex unless told
  // not to, before its first use (this constructor's, in `report DIR` and
  // `check DIR`; later it refuses, harmlessly): the threads below contended
  // for it (106k futex calls at 2,048 files, 1.2k without). Here, not in
  // Connection: the injector shares the job's SQLite, whose settings are
  // the job's.
  static const int no_memory_statistics = sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
  (void)no_memory_statistics;
  const size_t n = rank_files.size();
  allow_open_files(n);
  parts_.resize(n);
  std::vector<RankFileHead> heads(n);
  const int threads = core::worker_threads(4);
  core::parallel_runs(n, threads, [&](size_t k, size_t first, size_t last) {
    for (size_t i = first; i < last; ++i) {
      parts_[i] = open_part(rank_files[i]);
      heads[i] = head_of(*parts_[i]);
      // The caller's thread alone reports (a sink draws from one thread).
      if (k == 0) core::progress::update("report: opening rank files", (i + 1) * threads, n);
    }
  });
  check_ranks_unique(heads);
  // Each file's collective ids follow the files before it. A file that joins
  // plugin rows is placed in turn (only then is its highest id known); the
  // others, whose highest id is their own plus the base, together after.
  std::vector<Placement> at(n);
  std::vector<size_t> later;
  int64_t base = 0;
  for (size_t i = 0; i < n; ++i) {
    at[i] = {heads[i].process.rank, heads[i].process.clock_offset_ns, base};
    RunReader& f = *parts_[i];
    if (joins_plugin_rows(*f.conn_, f.version_)) {
      base = f.place(at[i]);
    } else {
      base = highest_id_at(*f.conn_, base);
      later.push_back(i);
    }
  }
  core::parallel_runs(later.size(), threads, [&](size_t, size_t first, size_t last) {
    for (size_t j = first; j < last; ++j) parts_[later[j]]->place(at[later[j]]);
  });
  meta_ = merged_meta(heads);
  // The merge writes the launch account before any rank's rows.
  parts_.insert(parts_.begin(), launch_part(dir, launch, heads));
  version_ = kSchemaVersion;
}

std::unique_ptr<RunReader> RunReader::open_part(const std::string& path) {
  auto part = std::unique_ptr<RunReader>(new RunReader(path, false));
  // Thousands of files open at once, each read about once: neither mapped
  // (mapped pages count as the process's memory, all files' together) nor
  // cached past a few pages (SQLite's 2 MiB a connection, 16 GiB at 8,192),
  // from the first read on: checking its tables reads each file whole.
  part->conn_->exec("PRAGMA mmap_size=0; PRAGMA cache_size=-256");
  // One read transaction for as long as the file is read: SQLite otherwise
  // takes and drops the file's lock around every statement (fcntl calls, a
  // stat for a hot journal, a re-read of the header), which at 2,048 files
  // was 340 fcntl calls a file and the larger part of the report's system
  // time. It also reads one snapshot of a file still being written (in WAL
  // mode, as record writes it, the writer goes on meanwhile).
  part->conn_->exec("BEGIN");
  check_tables(*part->conn_, part->version_);
  return part;
}

std::unique_ptr<RunReader> RunReader::launch_part(const std::string& dir,
                                                  const LaunchAccount& launch,
                                                  const std::vector<RankFileHead>& heads) {
  auto db = std::make_unique<Connection>(":memory:", Connection::Mode::create);
  create_schema(*db);
  write_launch_account(*db, launch, heads);
  return std::unique_ptr<RunReader>(new RunReader(std::move(db), dir));
}

RunReader::~RunReader() = default;

int64_t RunReader::place(const Placement& p) {
  placement_ = p;
  int64_t next = place_rank_file(*conn_, version_, p);
  written_version_ = version_;
  version_ = kSchemaVersion;
  return next;
}

std::vector<RunReader*> RunReader::parts(bool by_rank) {
  if (conn_) return {this};
  std::vector<RunReader*> out;
  for (auto& p : parts_) out.push_back(p.get());
  if (by_rank)
    std::stable_sort(out.begin(), out.end(), [](RunReader* a, RunReader* b) {
      return a->placement_.value_or(Placement{INT_MIN}).rank <
             b->placement_.value_or(Placement{INT_MIN}).rank;
    });
  return out;
}

RunReader& RunReader::part_of_rank(int rank) {
  for (auto& p : parts_)
    if (p->placement_ && p->placement_->rank == rank) return *p;
  return conn_ ? *this : *parts_.front();  // no rows of it: the launch account's part
}

std::vector<RunReader*> RunReader::parts_for(const std::string& order, const std::string& where) {
  // One part has the rank's rows (thousands of statements saved at
  // thousands of ranks, where a caller asks rank by rank).
  if (auto rank = rank_chosen(where)) {
    std::vector<RunReader*> out{parts_.front().get()};
    RunReader& part = part_of_rank(*rank);
    if (&part != out.front()) out.push_back(&part);
    return out;
  }
  return parts(order.rfind("rank", 0) == 0);
}

void RunReader::set_filter(RunFilter f) {
  for (auto& p : parts_) p->set_filter(f);
  filter_ = std::move(f);
}

std::string RunReader::filter_sql(const TableSpec& t) const {
  if (filter_.all() || !t.per_rank) return "";
  std::string sql;
  auto add = [&](const std::string& c) { sql += (sql.empty() ? "" : " AND ") + c; };
  if (!filter_.ranks.empty()) {
    std::string in;
    for (int r : filter_.ranks) in += (in.empty() ? "" : ",") + std::to_string(r);
    add("rank IN (" + in + ")");
  }
  if (const char* time = event_time_column(t)) {
    std::string col(time);
    if (filter_.since_ns != INT64_MIN)
      add("(" + col + " IS NULL OR " + col + " >= " + std::to_string(filter_.since_ns) + ")");
    if (filter_.until_ns != INT64_MAX)
      add("(" + col + " IS NULL OR " + col + " < " + std::to_string(filter_.until_ns) + ")");
  }
  return sql;
}

std::string RunReader::where(const std::string& table) const {
  for (const TableSpec* t : tables())
    if (table == t->name) {
      std::string sql = filter_sql(*t);
      return sql.empty() ? "1" : "(" + sql + ")";
    }
  return "1";
}

std::string RunReader::rank_order(const std::string& table, const std::string& where) const {
  if (filter_.ranks.empty() && !rank_chosen(where)) return "";
  for (const TableSpec* t : tables())
    if (table == t->name && has_rank_time_index(*t))
      return std::string("rank, ") + event_time_column(*t) + ", rowid";
  return "";
}

std::map<std::string, std::string> RunReader::meta() {
  if (!conn_) return meta_;
  std::map<std::string, std::string> m;
  Statement s(*conn_, "SELECT key, value FROM meta");
  while (s.step()) m[s.text(0)] = s.text(1);
  return m;
}

std::string RunReader::timeline() {
  auto m = meta();
  auto it = m.find("timeline");
  return it == m.end() ? "monotonic" : it->second;
}

std::vector<ProcessRecord> RunReader::processes() { return rows<ProcessRecord>("", "rank"); }

std::vector<CommRecord> RunReader::comms() { return rows<CommRecord>("", "rank, created_ns"); }

void RunReader::for_each_collective(const std::function<void(const CollectiveRecord&)>& fn,
                                    const std::string& where) {
  for_each<CollectiveRecord>(fn, where, "id");
}

std::vector<CollectiveRecord> RunReader::collectives(const std::string& where) {
  return rows<CollectiveRecord>(where, "id");
}

int64_t RunReader::count(const std::string& table) {
  if (!conn_) {
    int64_t n = 0;
    for (RunReader* p : parts()) n += p->count(table);
    return n;
  }
  std::string where;
  for (const TableSpec* t : tables())
    if (table == t->name) where = filter_sql(*t);
  Statement s(*conn_, "SELECT count(*) FROM " + table + (where.empty() ? "" : " WHERE " + where));
  return s.step() ? s.int64(0) : 0;
}

std::optional<std::pair<int64_t, int64_t>> RunReader::rowid_range(const std::string& table) {
  if (!conn_) throw std::logic_error("rowid_range of several files: read them by parts()");
  Statement s(*conn_, "SELECT (SELECT min(rowid) FROM " + table + "), (SELECT max(rowid) FROM " +
                          table + ")");
  if (!s.step() || s.is_null(0)) return std::nullopt;
  return std::pair{s.int64(0), s.int64(1)};
}

std::unique_ptr<RunReader> RunReader::one_pass_beside() const {
  if (!conn_) throw std::logic_error("one_pass_beside of several files: read them by parts()");
  // Checked once already, when this reader opened it.
  auto r = std::unique_ptr<RunReader>(new RunReader(path(), false));
  if (placement_) r->place(*placement_);
  r->set_filter(filter_);
  r->connection().exec("PRAGMA mmap_size=0");
  return r;
}

std::unique_ptr<RunReader> open_run(const std::string& path) {
  if (!std::filesystem::is_directory(path)) return std::make_unique<RunReader>(path);
  return std::make_unique<RunReader>(path, find_rank_files(path), read_launch_account(path));
}

}  // namespace ddpscope::store
