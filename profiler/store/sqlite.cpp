#include "profiler/store/sqlite.h"

#include <sqlite3.h>

#include <cstdio>

#include "profiler/core/records.h"

namespace ddpscope::store {

Connection::Connection(const std::string& path, Mode mode) : path_(path) {
  int flags = SQLITE_OPEN_NOMUTEX;
  if (mode == Mode::read_only) flags |= SQLITE_OPEN_READONLY;
  if (mode == Mode::read_write) flags |= SQLITE_OPEN_READWRITE;
  if (mode == Mode::create) flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  if (mode == Mode::scratch) flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_URI;
  int rc = sqlite3_open_v2(path.c_str(), &db_, flags, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    sqlite3_close(db_);
    db_ = nullptr;
    throw InputError(path, "cannot open: " + msg);
  }
  // A rank file may still be held by a live writer; wait briefly rather than fail.
  // A scratch connection's attachments are live rank files it can read next
  // time: a short wait, not a stalled watcher.
  sqlite3_busy_timeout(db_, mode == Mode::scratch ? 50 : 5000);
}

std::string read_only_uri(const std::string& path) {
  std::string uri = "file:";
  for (unsigned char c : path) {
    if (c == '?' || c == '#' || c == '%' || c < 0x20) {
      char hex[4];
      snprintf(hex, sizeof hex, "%%%02X", c);
      uri += hex;
    } else {
      uri += char(c);
    }
  }
  return uri + "?mode=ro";
}

Connection::~Connection() { sqlite3_close(db_); }

void Connection::fail(const std::string& what) const {
  throw InputError(path_, what + ": " + sqlite3_errmsg(db_));
}

void Connection::exec(std::string_view sql) {
  char* err = nullptr;
  std::string s(sql);
  if (sqlite3_exec(db_, s.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : "unknown error";
    sqlite3_free(err);
    throw InputError(path_, msg);
  }
}

Statement::Statement(Connection& conn, std::string_view sql) : conn_(conn) {
  if (sqlite3_prepare_v2(conn.handle(), sql.data(), int(sql.size()), &stmt_, nullptr) != SQLITE_OK)
    conn.fail("cannot prepare statement");
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

void Statement::bind(int i, int64_t v) { sqlite3_bind_int64(stmt_, i, v); }
void Statement::bind(int i, double v) { sqlite3_bind_double(stmt_, i, v); }
void Statement::bind_text(int i, std::string_view v) {
  sqlite3_bind_text(stmt_, i, v.data(), int(v.size()), SQLITE_STATIC);
}
void Statement::bind_blob(int i, std::string_view v) {
  sqlite3_bind_blob(stmt_, i, v.data(), int(v.size()), SQLITE_STATIC);
}
void Statement::bind_null(int i) { sqlite3_bind_null(stmt_, i); }
void Statement::bind_time(int i, int64_t ns) {
  if (ns == kNoTime)
    bind_null(i);
  else
    bind(i, ns);
}

int Statement::parameters() const { return sqlite3_bind_parameter_count(stmt_); }

bool Statement::step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  conn_.fail("query failed");
}

void Statement::run() {
  step();
  sqlite3_reset(stmt_);  // every parameter is bound again before the next run
}

void Statement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

int64_t Statement::int64(int col) const { return sqlite3_column_int64(stmt_, col); }
double Statement::real(int col) const { return sqlite3_column_double(stmt_, col); }
std::string Statement::text(int col) const {
  auto* p = sqlite3_column_text(stmt_, col);
  return p ? std::string(reinterpret_cast<const char*>(p), sqlite3_column_bytes(stmt_, col)) : "";
}
std::string_view Statement::text_view(int col) const {
  auto* p = sqlite3_column_text(stmt_, col);
  return p ? std::string_view(reinterpret_cast<const char*>(p), sqlite3_column_bytes(stmt_, col))
           : std::string_view();
}
std::string_view Statement::blob_view(int col) const {
  auto* p = sqlite3_column_blob(stmt_, col);
  return p ? std::string_view(static_cast<const char*>(p), sqlite3_column_bytes(stmt_, col))
           : std::string_view();
}
bool Statement::is_null(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
int64_t Statement::time(int col) const {
  const int type = sqlite3_column_type(stmt_, col);
  if (type == SQLITE_NULL) return kNoTime;
  const int64_t ns = int64(col);
  if (type == SQLITE_INTEGER && ns > -kTimeLimit && ns < kTimeLimit) return ns;
  const char* name = sqlite3_column_name(stmt_, col);
  throw InputError(conn_.path(), std::string("damaged ddpscope database: column ") +
                                     (name ? name : "?") + " holds '" + text(col) +
                                     "', not a time in nanoseconds");
}

int64_t Statement::required_time(int col) const {
  if (!is_null(col)) return time(col);
  const char* name = sqlite3_column_name(stmt_, col);
  throw InputError(conn_.path(), std::string("damaged ddpscope database: column ") +
                                     (name ? name : "?") + " is empty in a row that needs it");
}

Transaction::Transaction(Connection& conn) : conn_(conn) { conn_.exec("BEGIN"); }
Transaction::~Transaction() {
  if (!done_) {
    try {
      conn_.exec("ROLLBACK");
    } catch (...) {
    }
  }
}
void Transaction::commit() {
  conn_.exec("COMMIT");
  done_ = true;
}

}  // namespace ddpscope::store
