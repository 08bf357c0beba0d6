#include "profiler/store/reader.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <string_view>

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

}  // namespace

RunReader::RunReader(const std::string& path) {
  if (!std::filesystem::exists(path)) throw InputError(path, "no such file");
  if (std::filesystem::is_directory(path))
    throw InputError(path, "is a directory (give the run.db inside it)");
  conn_ = std::make_unique<Connection>(path, Connection::Mode::read_only);
  version_ = check_schema(*conn_);
  // Reports scan whole tables: memory-mapped reads skip a copy per page (the
  // pages are the OS's file cache, not our heap).
  conn_->exec("PRAGMA mmap_size=4294967296");
  check_tables(*conn_, version_);
}

RunReader::~RunReader() = default;

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

std::map<std::string, std::string> RunReader::meta() {
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
  std::string where;
  for (const TableSpec* t : tables())
    if (table == t->name) where = filter_sql(*t);
  Statement s(*conn_, "SELECT count(*) FROM " + table + (where.empty() ? "" : " WHERE " + where));
  return s.step() ? s.int64(0) : 0;
}

std::optional<std::pair<int64_t, int64_t>> RunReader::rowid_range(const std::string& table) {
  Statement s(*conn_, "SELECT (SELECT min(rowid) FROM " + table + "), (SELECT max(rowid) FROM " +
                          table + ")");
  if (!s.step() || s.is_null(0)) return std::nullopt;
  return std::pair{s.int64(0), s.int64(1)};
}

std::unique_ptr<RunReader> RunReader::one_pass_beside() const {
  auto r = std::make_unique<RunReader>(path());
  r->set_filter(filter_);
  r->connection().exec("PRAGMA mmap_size=0");
  return r;
}

}  // namespace ddpscope::store
