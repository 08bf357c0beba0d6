#include "record/window.h"

#include <filesystem>
#include <set>

#include "profiler/core/input_error.h"
#include "profiler/store/merge.h"
#include "profiler/store/schema.h"
#include "profiler/store/table.h"

namespace fs = std::filesystem;

namespace ddpscope::record {

using store::Connection;
using store::Statement;
using store::TableSpec;
using store::Transaction;

namespace {

// Rank k's collective ids start past k·2^36: stable between refreshes, and
// room for 68 billion collectives a rank.
constexpr int kIdShift = 36;

// One rank file attached as `src` for the length of a scope; a failed read
// inside it is rolled back by the caller's Transaction first.
class Attached {
 public:
  Attached(Connection& db, const std::string& file) : db_(db) {
    Statement attach(db_, "ATTACH DATABASE ? AS src");
    std::string uri = store::read_only_uri(fs::absolute(file).string());
    attach.bind_text(1, uri);
    attach.run();
  }
  ~Attached() {
    try {
      db_.exec("DETACH DATABASE src");
    } catch (const InputError&) {  // nothing attached is left to read: harmless
    }
  }

 private:
  Connection& db_;
};

int64_t single_int(Connection& db, const std::string& sql) {
  Statement s(db, sql);
  return s.step() && !s.is_null(0) ? s.int64(0) : 0;
}

// The newest rowid of each of `tables` in `src` (0 when empty), in one statement.
std::vector<int64_t> newest_rowids(Connection& db, const std::vector<const TableSpec*>& tables) {
  if (tables.empty()) return {};
  std::string sql = "SELECT ";
  for (size_t i = 0; i < tables.size(); ++i)
    sql += std::string(i ? ", " : "") + "(SELECT max(rowid) FROM src." + tables[i]->name + ")";
  Statement st(db, sql);
  st.step();
  std::vector<int64_t> out;
  for (size_t i = 0; i < tables.size(); ++i)
    out.push_back(st.is_null(int(i)) ? 0 : st.int64(int(i)));
  return out;
}

// A few rows of the rank file attached as `src`; false when it cannot be
// read now (being created, or locked by a writer on a network file system).
bool glance(Connection& db, const std::set<std::string>& tables, analysis::RankGlance& g) {
  try {
    Statement p(db, "SELECT pid, host, clock_offset_ns FROM src.processes LIMIT 1");
    if (!p.step()) return false;
    g.pid = p.int64(0);
    g.host = p.text(1);
    int64_t offset = p.int64(2);
    Statement last(db,
                   "SELECT max(host_end_ns) FROM (SELECT host_end_ns FROM src.collectives "
                   "ORDER BY id DESC LIMIT 64)");
    if (last.step() && !last.is_null(0)) g.last_end_wall = last.int64(0) + offset;
    if (!tables.count("inflight")) return true;
    Statement in(db, "SELECT count(*), min(host_start_ns) FROM src.inflight");
    if (in.step() && in.int64(0) > 0) {
      g.inflight = int(in.int64(0));
      g.first_inflight_wall = in.int64(1) + offset;
    }
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace

std::vector<analysis::RankGlance> glance_rank_files(const std::string& dir) {
  Connection db(":memory:", Connection::Mode::scratch);
  std::vector<analysis::RankGlance> out;
  for (const auto& file : store::find_rank_files(dir)) {
    try {
      Attached attached(db, file);
      analysis::RankGlance g;
      if (glance(db, store::table_names(db, "src"), g)) out.push_back(std::move(g));
    } catch (const std::exception&) {  // not readable now: no glance
    }
  }
  return out;
}

RecordingWindow::RecordingWindow(std::string dir, std::string scratch)
    : dir_(std::move(dir)), scratch_(std::move(scratch)) {
  std::error_code ec;
  fs::remove(scratch_, ec);
  db_ = std::make_unique<Connection>(scratch_, Connection::Mode::scratch);
  db_->exec("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;");
  store::create_schema(*db_);
  store::drop_triggers(*db_);  // its trims would run kernel_blocks' triggers per row
  store::create_indexes(*db_);
  db_->exec(
      "INSERT INTO meta(key, value) VALUES('kind', 'run'), ('timeline', 'wall'), ('ranks', '0')");
}

RecordingWindow::~RecordingWindow() {
  db_.reset();
  std::error_code ec;
  fs::remove(scratch_, ec);
}

// The file's schema and process row; false while it has none yet (being
// created) or it is not a ddpscope rank file.
bool RecordingWindow::inspect(Source& source) {
  if (single_int(*db_, "PRAGMA src.application_id") != store::kApplicationId) return false;
  source.version = int(single_int(*db_, "PRAGMA src.user_version"));
  if (source.version < 1 || source.version > store::kSchemaVersion) return false;
  Statement p(*db_, "SELECT rank, clock_offset_ns FROM src.processes LIMIT 1");
  if (!p.step()) return false;
  source.rank = int(p.int64(0));
  source.clock_offset_ns = p.int64(1);
  return true;
}

// What the run says of itself (torch, backend, command), from the first rank
// file read, as the merge writes it.
void RecordingWindow::write_meta() {
  db_->exec(
      "INSERT OR REPLACE INTO main.meta(key, value) SELECT key, value FROM src.meta "
      "WHERE key NOT IN ('kind', 'timeline', 'ranks', 'host') AND key NOT LIKE 'count:%'");
}

// One rank file attached once: the glance at it, then the rows it gained. A
// failed read is rolled back by take()'s Transaction before the detach.
bool RecordingWindow::look_at(const std::string& file, Source& source, WindowRefresh& seen) {
  try {
    Attached attached(*db_, file);
    const auto tables = store::table_names(*db_, "src");
    analysis::RankGlance g;
    if (glance(*db_, tables, g)) seen.ranks.push_back(std::move(g));
    return take(source, tables, seen.rows);
  } catch (const InputError&) {  // locked, or half-created: the next refresh
    return false;
  }
}

bool RecordingWindow::take(Source& source, const std::set<std::string>& present, int64_t& rows) {
  // Changed only once the copy committed: a rolled-back one is read again.
  Source next = source;
  int64_t copied = 0;
  // One transaction: every table read from one snapshot of the rank file.
  Transaction tx(*db_);
  if (next.version == 0 && !inspect(next)) return false;
  if (!meta_written_) write_meta();
  std::vector<const TableSpec*> tables;
  for (const TableSpec* t : store::tables())
    if (t->per_rank && t->since_version <= next.version && present.count(t->name))
      tables.push_back(t);
  const auto newest_of = newest_rowids(*db_, tables);
  for (size_t k = 0; k < tables.size(); ++k) {
    const TableSpec* t = tables[k];
    if (!t->appended) {
      Statement clear(*db_, std::string("DELETE FROM main.") + t->name + " WHERE rank = ?");
      clear.bind(1, int64_t(next.rank));
      clear.run();
    }
    int64_t& last = next.last_rowid[t->name];
    const int64_t newest = newest_of[k];
    if (t->appended && newest <= last) continue;
    Statement copy(
        *db_, store::merge_sql(*t, next.version, t->appended ? "rowid > ?3 AND rowid <= ?4" : ""));
    copy.bind(1, next.clock_offset_ns);
    if (copy.parameters() >= 2) copy.bind(2, next.id_base);
    if (t->appended) {
      copy.bind(3, last);
      copy.bind(4, newest);
      copied += newest - last;
      last = newest;
    }
    copy.run();
  }
  tx.commit();
  meta_written_ = true;
  source = std::move(next);
  rows += copied;
  return true;
}

void RecordingWindow::drop_before(int64_t since_wall_ns) {
  Transaction tx(*db_);
  for (const TableSpec* t : store::tables()) {
    const char* time = store::event_time_column(*t);
    if (!t->per_rank || !t->appended || !time) continue;
    if (!store::has_rank_time_index(*t)) {
      Statement drop(*db_, std::string("DELETE FROM ") + t->name + " WHERE " + time + " < ?");
      drop.bind(1, since_wall_ns);
      drop.run();
      continue;
    }
    // Every row is a read rank's (take() copies rows only from a file whose
    // process row it read).
    Statement drop(*db_,
                   std::string("DELETE FROM ") + t->name + " WHERE rank = ? AND " + time + " < ?");
    for (const auto& [file, source] : sources_) {
      if (source.version == 0) continue;
      drop.bind(1, int64_t(source.rank));
      drop.bind(2, since_wall_ns);
      drop.run();
    }
  }
  kernel_blocks_.drop_before(*db_, since_wall_ns);
  tx.commit();
}

WindowRefresh RecordingWindow::refresh(int64_t since_wall_ns) {
  WindowRefresh r;
  for (const auto& file : store::find_rank_files(dir_)) {
    ++r.files;
    auto [it, fresh] = sources_.try_emplace(file);
    if (fresh) it->second.id_base = int64_t(sources_.size() - 1) << kIdShift;
    if (!look_at(file, it->second, r)) ++r.unreadable;
  }
  Statement ranks(*db_, "INSERT OR REPLACE INTO meta(key, value) VALUES('ranks', ?)");
  std::string n = std::to_string(single_int(*db_, "SELECT count(*) FROM processes"));
  ranks.bind_text(1, n);
  ranks.run();
  kernel_blocks_.note_copied(*db_);
  drop_before(since_wall_ns);
  return r;
}

}  // namespace ddpscope::record
