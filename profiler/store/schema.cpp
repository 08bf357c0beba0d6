#include "profiler/store/schema.h"

#include <string>
#include <vector>

#include "profiler/store/table.h"

namespace ddpscope::store {
namespace {

int pragma_int(Connection& conn, const char* pragma) {
  Statement st(conn, std::string("PRAGMA ") + pragma);
  return st.step() ? int(st.int64(0)) : 0;
}

}  // namespace

// One transaction: a rank killed while its writer creates the schema leaves
// an empty file (no rank yet), never tables without the marker that says they
// are ddpscope's (application_id, written last) or a marker over half the
// tables. Both pragmas write the file's header, inside the transaction.
void create_schema(Connection& conn) {
  Transaction tx(conn);
  conn.exec("CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);");
  for (const TableSpec* t : tables()) conn.exec(create_sql(*t));
  for (const TableSpec* t : tables())  // after every table: a trigger may name several
    if (*t->triggers) conn.exec(t->triggers);
  conn.exec("PRAGMA application_id=" + std::to_string(kApplicationId));
  conn.exec("PRAGMA user_version=" + std::to_string(kSchemaVersion));
  tx.commit();
}

void drop_triggers(Connection& conn) {
  std::vector<std::string> names;
  {
    Statement s(conn, "SELECT name FROM sqlite_master WHERE type = 'trigger'");
    while (s.step()) names.push_back(s.text(0));
  }
  for (const auto& name : names) conn.exec("DROP TRIGGER \"" + name + "\"");
}

void create_indexes(Connection& conn) {
  for (const TableSpec* t : tables())
    if (*t->indexes) conn.exec(t->indexes);
}

int check_schema(Connection& conn) {
  int app = 0;
  try {
    app = pragma_int(conn, "application_id");
  } catch (const InputError&) {
    // SQLite reports "file is not a database" on the first read of a foreign file.
    throw InputError(conn.path(), "not an SQLite database (is this a ddpscope .db file?)");
  }
  if (app != kApplicationId)
    throw InputError(conn.path(), "an SQLite database, but not one written by ddpscope");
  int version = pragma_int(conn, "user_version");
  if (version > kSchemaVersion)
    throw InputError(conn.path(), "written with ddpscope schema v" + std::to_string(version) +
                                      ", this ddpscope reads up to v" +
                                      std::to_string(kSchemaVersion) + ": upgrade ddpscope");
  if (version < 1)
    throw InputError(conn.path(), "ddpscope database without a schema version (damaged file?)");
  return version;
}

bool has_table(Connection& conn, const std::string& name, const std::string& schema) {
  Statement st(conn, "SELECT 1 FROM " + schema + ".sqlite_master WHERE type='table' AND name=?");
  st.bind_text(1, name);
  return st.step();
}

std::set<std::string> table_names(Connection& conn, const std::string& schema) {
  std::set<std::string> out;
  Statement st(conn, "SELECT name FROM " + schema + ".sqlite_master WHERE type = 'table'");
  while (st.step()) out.insert(st.text(0));
  return out;
}

}  // namespace ddpscope::store
