// The run's own tables: processes, communicators, collectives.
#include "profiler/store/rows.h"

namespace ddpscope::store {
namespace {

constexpr Column kProcessColumns[] = {{"rank", "INTEGER PRIMARY KEY"},
                                      {"world_size", "INTEGER"},
                                      {"local_rank", "INTEGER"},
                                      {"host", "TEXT"},
                                      {"pid", "INTEGER"},
                                      {"device", "INTEGER"},
                                      {"backend", "TEXT"},
                                      {"clock_offset_ns", "INTEGER"},
                                      {"dropped_events", "INTEGER"},
                                      {"rank_source", "TEXT"},
                                      {"start_ns", "INTEGER"},
                                      {"end_ns", "INTEGER"},
                                      {.name = "finalized", .type = "INTEGER", .since_version = 5}};

constexpr Column kStackColumns[] = {{"rank", "INTEGER"}, {"pid", "INTEGER"}, {"text", "TEXT"}};

constexpr Column kRankExitColumns[] = {
    {"rank", "INTEGER PRIMARY KEY"}, {"exit_code", "INTEGER"}, {"signal", "INTEGER"}};

constexpr Column kCommColumns[] = {
    {"rank", "INTEGER"},           {"comm_id", "INTEGER"}, {"comm_rank", "INTEGER"},
    {"nranks", "INTEGER"},         {"device", "INTEGER"},  {"backend", "TEXT"},
    {"parent_comm_id", "INTEGER"}, {"origin", "TEXT"},     {"created_ns", "INTEGER"},
    {"ended_ns", "INTEGER"},       {"end_reason", "TEXT"}};

constexpr Column kCollectiveColumns[] = {{"id", "INTEGER PRIMARY KEY"},
                                         {"rank", "INTEGER"},
                                         {"comm_id", "INTEGER"},
                                         {"seq", "INTEGER"},
                                         {"op", "TEXT"},
                                         {"dtype", "TEXT"},
                                         {"count", "INTEGER"},
                                         {"bytes", "INTEGER"},
                                         {"root", "INTEGER"},
                                         {"peer", "INTEGER"},
                                         {"stream", "INTEGER"},
                                         {"tid", "INTEGER"},
                                         {"group_id", "INTEGER"},
                                         {"host_start_ns", "INTEGER"},
                                         {"host_end_ns", "INTEGER"},
                                         {"start_ns", "INTEGER"},
                                         {"end_ns", "INTEGER"},
                                         {"timing", "TEXT"},
                                         {"comm_rank", "INTEGER"},
                                         {"nranks", "INTEGER"},
                                         {"redop", "TEXT"}};

}  // namespace

const TableSpec& Row<ProcessRecord>::table() {
  // One row per process, rewritten at every flush.
  static const TableSpec t{.name = "processes",
                           .columns = kProcessColumns,
                           .insert_verb = "INSERT OR REPLACE",
                           .appended = false};
  return t;
}

void Row<ProcessRecord>::bind(Statement& s, int b, const ProcessRecord& p) {
  s.bind(b + 1, int64_t(p.rank));
  s.bind(b + 2, int64_t(p.world_size));
  s.bind(b + 3, int64_t(p.local_rank));
  s.bind_text(b + 4, p.host);
  s.bind(b + 5, p.pid);
  s.bind(b + 6, int64_t(p.device));
  s.bind_text(b + 7, name_of(p.backend));
  s.bind(b + 8, p.clock_offset_ns);
  s.bind(b + 9, int64_t(p.dropped_events));
  s.bind_text(b + 10, p.rank_source);
  s.bind_time(b + 11, p.start_ns);
  s.bind_time(b + 12, p.end_ns);
  s.bind(b + 13, int64_t(p.finalized));
}

ProcessRecord Row<ProcessRecord>::read(const Statement& s) {
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
  p.finalized = int32_t(s.int64(12));
  return p;
}

const TableSpec& Row<RankExitRecord>::table() {
  // Written into run databases by `record --nproc` (the launcher's account),
  // not by the ranks: the merge does not copy it from rank files.
  static const TableSpec t{.name = "rank_exits",
                           .columns = kRankExitColumns,
                           .insert_verb = "INSERT OR REPLACE",
                           .per_rank = false,
                           .since_version = 5};
  return t;
}

void Row<RankExitRecord>::bind(Statement& s, int b, const RankExitRecord& r) {
  s.bind(b + 1, int64_t(r.rank));
  if (r.exit_code >= 0)
    s.bind(b + 2, int64_t(r.exit_code));
  else
    s.bind_null(b + 2);
  if (r.signal > 0)
    s.bind(b + 3, int64_t(r.signal));
  else
    s.bind_null(b + 3);
}

RankExitRecord Row<RankExitRecord>::read(const Statement& s) {
  RankExitRecord r;
  r.rank = int32_t(s.int64(0));
  r.exit_code = s.is_null(1) ? -1 : int32_t(s.int64(1));
  r.signal = s.is_null(2) ? 0 : int32_t(s.int64(2));
  return r;
}

const TableSpec& Row<CommRecord>::table() {
  static const TableSpec t{.name = "comms",
                           .columns = kCommColumns,
                           .constraints = "PRIMARY KEY(rank, comm_id, comm_rank)",
                           .insert_verb = "INSERT OR REPLACE",
                           .appended = false};
  return t;
}

void Row<CommRecord>::bind(Statement& s, int b, const CommRecord& c) {
  s.bind(b + 1, int64_t(c.rank));
  s.bind(b + 2, int64_t(c.comm_id));
  s.bind(b + 3, int64_t(c.comm_rank));
  s.bind(b + 4, int64_t(c.nranks));
  s.bind(b + 5, int64_t(c.device));
  s.bind_text(b + 6, name_of(c.backend));
  s.bind(b + 7, int64_t(c.parent_comm_id));
  s.bind_text(b + 8, name_of(c.origin));
  s.bind_time(b + 9, c.created_ns);
  s.bind_time(b + 10, c.ended_ns);
  s.bind_text(b + 11, name_of(c.end));
}

CommRecord Row<CommRecord>::read(const Statement& s) {
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
  return c;
}

const TableSpec& Row<CollectiveRecord>::table() {
  static const TableSpec t{
      .name = "collectives",
      .columns = kCollectiveColumns,
      .indexes =
          "CREATE INDEX IF NOT EXISTS collectives_by_comm ON collectives(comm_id, seq, rank);"
          "CREATE INDEX IF NOT EXISTS collectives_by_rank ON collectives(rank, host_start_ns);"};
  return t;
}

// Collectives keep the id they carry (> 0), so kernels written with them can
// name it; id 0 lets SQLite assign the next.
void Row<CollectiveRecord>::bind(Statement& s, int b, const CollectiveRecord& c) {
  if (c.id > 0)
    s.bind(b + 1, c.id);
  else
    s.bind_null(b + 1);
  s.bind(b + 2, int64_t(c.rank));
  s.bind(b + 3, int64_t(c.comm_id));
  s.bind(b + 4, int64_t(c.seq));
  s.bind_text(b + 5, name_of(c.op));
  s.bind_text(b + 6, name_of(c.dtype));
  s.bind(b + 7, int64_t(c.count));
  s.bind(b + 8, int64_t(c.bytes));
  s.bind(b + 9, int64_t(c.root));
  s.bind(b + 10, int64_t(c.peer));
  s.bind(b + 11, int64_t(c.stream));
  s.bind(b + 12, int64_t(c.tid));
  s.bind(b + 13, int64_t(c.group_id));
  s.bind_time(b + 14, c.host_start_ns);
  s.bind_time(b + 15, c.host_end_ns);
  s.bind_time(b + 16, c.start_ns);
  s.bind_time(b + 17, c.end_ns);
  s.bind_text(b + 18, name_of(c.timing));
  s.bind(b + 19, int64_t(c.comm_rank));
  s.bind(b + 20, int64_t(c.nranks));
  s.bind_text(b + 21, name_of(c.redop));
}

CollectiveRecord Row<CollectiveRecord>::read(const Statement& s) {
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
  c.host_start_ns = s.required_time(13);  // every hooked call is timed on the host
  c.host_end_ns = s.required_time(14);
  c.start_ns = s.time(15);
  c.end_ns = s.time(16);
  c.timing = parse_timing(s.text_view(17)).value_or(Timing::none);
  c.comm_rank = int32_t(s.int64(18));
  c.nranks = int32_t(s.int64(19));
  c.redop = parse_redop(s.text_view(20)).value_or(RedOp::none);
  return c;
}

const TableSpec& Row<StackRecord>::table() {
  // Written into run databases from DIR/stacks-<pid>.txt (launch_account.h).
  static const TableSpec t{
      .name = "stacks", .columns = kStackColumns, .per_rank = false, .since_version = 5};
  return t;
}

void Row<StackRecord>::bind(Statement& s, int b, const StackRecord& r) {
  s.bind(b + 1, int64_t(r.rank));
  s.bind(b + 2, r.pid);
  s.bind_text(b + 3, r.text);
}

StackRecord Row<StackRecord>::read(const Statement& s) {
  return {int32_t(s.int64(0)), s.int64(1), s.text(2)};
}

}  // namespace ddpscope::store
