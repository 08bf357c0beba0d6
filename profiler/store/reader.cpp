#include "profiler/store/reader.h"

#include <filesystem>

#include "profiler/store/schema.h"

namespace ddpscope::store {
namespace {

// Every table must be present and readable: a truncated or damaged file fails
// here with one line instead of half-way through a report.
void check_tables(Connection& conn) {
  for (const char* t :
       {"meta", "processes", "comms", "collectives", "kernels", "ranges", "syncs", "tune_runs",
        "tune_results"}) {
    try {
      Statement st(conn, std::string("SELECT count(*) FROM ") + t);
      st.step();
    } catch (const StoreError&) {
      throw StoreError(conn.path(), std::string("damaged ddpscope database: table '") + t +
                                        "' is missing or unreadable");
    }
  }
}

CollectiveRecord read_collective(const Statement& s) {
  CollectiveRecord c;
  c.id = s.int64(0);
  c.rank = int32_t(s.int64(1));
  c.comm_id = uint64_t(s.int64(2));
  c.seq = uint64_t(s.int64(3));
  c.op = parse_op(s.text_view(4)).value_or(Op::allreduce);
  c.dtype = parse_dtype(s.text_view(5)).value_or(Dtype::unknown);
  c.count = uint64_t(s.int64(6));
  c.bytes = uint64_t(s.int64(7));
  c.root = int32_t(s.int64(8));
  c.peer = int32_t(s.int64(9));
  c.stream = uint64_t(s.int64(10));
  c.tid = uint32_t(s.int64(11));
  c.group_id = uint64_t(s.int64(12));
  c.host_start_ns = s.time(13);
  c.host_end_ns = s.time(14);
  c.start_ns = s.time(15);
  c.end_ns = s.time(16);
  c.timing = parse_timing(s.text_view(17)).value_or(Timing::none);
  c.comm_rank = int32_t(s.int64(18));
  c.nranks = int32_t(s.int64(19));
  c.redop = parse_redop(s.text_view(20)).value_or(RedOp::none);
  return c;
}

}  // namespace

RunReader::RunReader(const std::string& path) {
  if (!std::filesystem::exists(path)) throw StoreError(path, "no such file");
  if (std::filesystem::is_directory(path))
    throw StoreError(path, "is a directory (give the run.db inside it)");
  conn_ = std::make_unique<Connection>(path, Connection::Mode::read_only);
  check_schema(*conn_);
  // Reports scan whole tables: memory-mapped reads skip a copy per page (the
  // pages are the OS's file cache, not our heap).
  conn_->exec("PRAGMA mmap_size=4294967296");
  check_tables(*conn_);
}

RunReader::~RunReader() = default;

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

std::vector<ProcessRecord> RunReader::processes() {
  std::vector<ProcessRecord> out;
  Statement s(*conn_,
              "SELECT rank, world_size, local_rank, host, pid, device, backend, clock_offset_ns, "
              "dropped_events, rank_source, start_ns, end_ns FROM processes ORDER BY rank");
  while (s.step()) {
    ProcessRecord p;
    p.rank = int32_t(s.int64(0));
    p.world_size = int32_t(s.int64(1));
    p.local_rank = int32_t(s.int64(2));
    p.host = s.text(3);
    p.pid = s.int64(4);
    p.device = int32_t(s.int64(5));
    p.backend = parse_backend(s.text(6)).value_or(Backend::unknown);
    p.clock_offset_ns = s.int64(7);
    p.dropped_events = uint64_t(s.int64(8));
    p.rank_source = s.text(9);
    p.start_ns = s.time(10);
    p.end_ns = s.time(11);
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<CommRecord> RunReader::comms() {
  std::vector<CommRecord> out;
  Statement s(*conn_,
              "SELECT rank, comm_id, comm_rank, nranks, device, backend, parent_comm_id, origin, "
              "created_ns, ended_ns, end_reason FROM comms ORDER BY rank, created_ns");
  while (s.step()) {
    CommRecord c;
    c.rank = int32_t(s.int64(0));
    c.comm_id = uint64_t(s.int64(1));
    c.comm_rank = int32_t(s.int64(2));
    c.nranks = int32_t(s.int64(3));
    c.device = int32_t(s.int64(4));
    c.backend = parse_backend(s.text_view(5)).value_or(Backend::unknown);
    c.parent_comm_id = uint64_t(s.int64(6));
    c.origin = parse_comm_origin(s.text(7));
    c.created_ns = s.time(8);
    c.ended_ns = s.time(9);
    c.end = parse_comm_end(s.text(10));
    out.push_back(c);
  }
  return out;
}

void RunReader::for_each_collective(const std::function<void(const CollectiveRecord&)>& fn,
                                    const std::string& where) {
  std::string sql =
      "SELECT id, rank, comm_id, seq, op, dtype, count, bytes, root, peer, stream, tid, "
      "group_id, host_start_ns, host_end_ns, start_ns, end_ns, timing, comm_rank, nranks, redop "
      "FROM collectives";
  if (!where.empty()) sql += " WHERE " + where;
  sql += " ORDER BY id";
  Statement s(*conn_, sql);
  while (s.step()) fn(read_collective(s));
}

std::vector<CollectiveRecord> RunReader::collectives(const std::string& where) {
  std::vector<CollectiveRecord> out;
  for_each_collective([&](const CollectiveRecord& c) { out.push_back(c); }, where);
  return out;
}

int64_t RunReader::count(const std::string& table) {
  Statement s(*conn_, "SELECT count(*) FROM " + table);
  return s.step() ? s.int64(0) : 0;
}

}  // namespace ddpscope::store
