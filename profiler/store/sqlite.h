// A thin RAII layer over the SQLite C API: a connection and a prepared
// statement. Nothing else in ddpscope touches sqlite3_* directly.
#pragma once

#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>

#include "profiler/core/input_error.h"

struct sqlite3;
struct sqlite3_stmt;

namespace ddpscope::store {

// Any failure to read or write a database is an InputError (core/input_error.h):
// one line that names the file and says what is wrong, ready for the user.

class Connection {
 public:
  // scratch: created like `create`, for a private database of the process's
  // own that attaches others by URI (read_only_uri) and never waits long for
  // their writers' locks.
  enum class Mode { read_only, read_write, create, scratch };
  Connection(const std::string& path, Mode mode);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  void exec(std::string_view sql);
  sqlite3* handle() const { return db_; }
  const std::string& path() const { return path_; }
  [[noreturn]] void fail(const std::string& what) const;

 private:
  sqlite3* db_ = nullptr;
  std::string path_;
};

class Statement {
 public:
  Statement(Connection& conn, std::string_view sql);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Binding (1-based, as SQLite counts). Text is bound as static: it must
  // outlive the step, which our callers guarantee (interned names).
  void bind(int i, int64_t v);
  void bind(int i, double v);
  void bind_text(int i, std::string_view v);
  // A temporary string would be gone before the step (ASan found one):
  // refused at compile time.
  template <typename S>
  requires std::same_as<S, std::string>
  void bind_text(int i, S&& temporary) = delete;
  // Bytes, bound as static like text: `v` must outlive the step.
  void bind_blob(int i, std::string_view v);
  void bind_null(int i);
  void bind_time(int i, int64_t ns);  // kNoTime becomes NULL

  int parameters() const;  // how many parameters the SQL has

  bool step();  // true while a row is available
  void run();   // step a statement that returns no rows, then reset it
  void reset();

  int64_t int64(int col) const;
  double real(int col) const;
  std::string text(int col) const;
  std::string_view text_view(int col) const;  // valid until the next step()
  std::string_view blob_view(int col) const;  // the same, for bytes
  bool is_null(int col) const;
  // NULL becomes kNoTime; anything but an integer within kTimeLimit is a
  // damaged file (InputError naming the column).
  int64_t time(int col) const;
  // The same for a time every row has (NULL is damage too).
  int64_t required_time(int col) const;

 private:
  Connection& conn_;
  sqlite3_stmt* stmt_ = nullptr;
};

// "file:<path>?mode=ro": `path` attached by a scratch connection can only be
// read (and a reader closing last never checkpoints a live writer's WAL).
std::string read_only_uri(const std::string& path);

// A transaction that rolls back unless committed.
class Transaction {
 public:
  explicit Transaction(Connection& conn);
  ~Transaction();
  void commit();

 private:
  Connection& conn_;
  bool done_ = false;
};

}  // namespace ddpscope::store
