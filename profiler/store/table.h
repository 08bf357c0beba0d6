// The tables of ddpscope's databases, declared once each. The schema creates
// them, the writer and the reader bind and read them, and the merge copies
// them, all from these declarations: a capture source adds a table by
// declaring it (a TableSpec and a Row<Record> in a file of its own) and
// naming it in tables() — nothing else in the store changes.
//
// Merge convention: every column named `*_ns` except `clock_offset_ns` is a
// time on the rank's own clock and is shifted onto the wall timeline; columns
// marked `collective_ref` (and collectives.id) hold collective ids and are
// shifted past the ranks merged before.
#pragma once

#include <span>
#include <string>

#include "profiler/store/sqlite.h"

namespace ddpscope::store {

struct Column {
  const char* name;
  const char* type;  // SQLite type: INTEGER, TEXT, REAL
  bool collective_ref = false;
  int since_version = 1;  // the schema version that added it: older files read it as NULL
};

struct TableSpec {
  const char* name;
  std::span<const Column> columns;
  const char* constraints = "";  // appended to the column list, e.g. a primary key
  const char* indexes = "";      // CREATE INDEX statements, built after bulk writes
  const char* triggers = "";     // CREATE TRIGGER statements, made with the schema
  const char* insert_verb = "INSERT";
  bool per_rank = true;   // copied from rank files by the merge (tuner tables are not)
  int since_version = 1;  // the schema version that added it: older files lack it
  // The writer only appends to it (no row changes once written): a reader
  // following a live rank file reads just the rows past the last it read
  // (record/window.h). processes, comms and inflight are rewritten.
  bool appended = true;
};

// Every table, in creation order (meta is the schema's own).
std::span<const TableSpec* const> tables();

std::string create_sql(const TableSpec& t);
// "c1, c2, ...": the table's column names, in order.
std::string column_list(const TableSpec& t);
// "INSERT INTO t(c1, ...) VALUES(?,...),..." for `rows` rows.
std::string insert_sql(const TableSpec& t, int rows);
// "SELECT c1, ... FROM t" from a file of schema `version`: a column added
// later reads as NULL (Statement::int64 gives 0, text "").
std::string select_sql(const TableSpec& t, int version);
// `t`'s columns from a rank file of schema `version` as the merge writes
// them, each named as itself: times plus `offset`, collective ids plus `base`
// (SQL expressions: a parameter or a number); a column added later is NULL.
std::string placed_columns(const TableSpec& t, int version, const std::string& offset,
                           const std::string& base);
// The merge's copy of `t` from the attached rank file `src` of schema
// `version`: ?1 is the rank's clock offset, ?2 the collective id base;
// `where`, an optional condition on the source rows.
std::string merge_sql(const TableSpec& t, int version, const std::string& where = "");
// The column that places a row of `t` in time, by which a part of a run is
// chosen (`report --since`, the live window): host_start_ns, else start_ns;
// nullptr for a table of no events (processes is one: its start_ns is the
// process's).
const char* event_time_column(const TableSpec& t);
// Whether one of `t`'s indexes is on (rank, its event time column): rows of
// a rank before a time are then found through it, not by a scan of the table.
bool has_rank_time_index(const TableSpec& t);

// A record type's table: specialised once per record next to its TableSpec.
//   static const TableSpec& table();
//   static void bind(Statement& s, int first, const Record& r);  // columns first+1..
//   static Record read(const Statement& s);  // from select_sql's columns
template <typename Record>
struct Row;

}  // namespace ddpscope::store
