#include "profiler/store/placed_rank_file.h"

#include <string_view>

#include "profiler/store/nccl_join.h"
#include "profiler/store/table.h"

namespace ddpscope::store {
namespace {

// The tables join_nccl_plugin updates or adds rows to.
bool joined_table(const TableSpec& t) {
  for (std::string_view name :
       {"collectives", "comms", "nccl_plugin_comms", "nccl_plugin_collectives"})
    if (name == t.name) return true;
  return false;
}

// "SELECT <placed columns> [FROM main.t]": no rows for a table the merge does
// not take from rank files (the launch account's, the tuner's) or one the
// file's schema predates.
std::string placed_rows(const TableSpec& t, int version, const Placement& p, bool with_rowid) {
  const bool copied = t.per_rank && t.since_version <= version;
  std::string sql = "SELECT ";
  if (with_rowid) sql += copied ? "rowid AS rowid, " : "NULL AS rowid, ";
  sql += placed_columns(t, copied ? version : 0, std::to_string(p.clock_offset_ns),
                        std::to_string(p.id_base));
  return sql + (copied ? std::string(" FROM main.") + t.name : std::string(" WHERE 0"));
}

// Whether main's own table already reads as placed: an empty table of every
// column (no rows to shift, none to hide). Most of a file's tables are empty,
// and a view fewer is a schema parse fewer on each of thousands of files.
bool reads_as_placed(Connection& conn, const TableSpec& t, int version) {
  for (const auto& c : t.columns)
    if (c.since_version > version) return false;
  if (t.since_version > version) return false;
  Statement s(conn, std::string("SELECT 1 FROM main.") + t.name + " LIMIT 1");
  return !s.step();
}

int64_t highest_id(Connection& conn, const std::string& sql, int64_t otherwise) {
  Statement s(conn, sql);
  return s.step() && !s.is_null(0) ? s.int64(0) : otherwise;
}

}  // namespace

// Files before v4 carry no keys to join the plugin's rows by (merge.cpp).
bool joins_plugin_rows(Connection& conn, int version) {
  if (version < 4) return false;
  Statement s(conn, "SELECT 1 FROM main.nccl_plugin_comms LIMIT 1");
  return s.step();
}

int64_t highest_id_at(Connection& conn, int64_t base) {
  return highest_id(conn, "SELECT max(rowid) + " + std::to_string(base) + " FROM main.collectives",
                    base);
}

int64_t place_rank_file(Connection& conn, int version, const Placement& p) {
  conn.exec("PRAGMA temp_store=MEMORY");
  const bool join = joins_plugin_rows(conn, version);
  for (const TableSpec* t : tables()) {
    if (join && joined_table(*t)) {
      std::string create = create_sql(*t);
      conn.exec("CREATE TEMP" + create.substr(std::string_view("CREATE").size()));
      conn.exec("INSERT INTO temp." + std::string(t->name) + "(" + column_list(*t) + ") " +
                placed_rows(*t, version, p, false) + " ORDER BY rowid");
    } else if (!reads_as_placed(conn, *t, version)) {
      conn.exec("CREATE TEMP VIEW " + std::string(t->name) + " AS " +
                placed_rows(*t, version, p, true));
    }
  }
  if (join) {
    join_nccl_plugin(conn, p.rank);
    return highest_id(conn, "SELECT max(id) FROM temp.collectives", p.id_base);
  }
  return highest_id_at(conn, p.id_base);
}

}  // namespace ddpscope::store
