// The collectives each rank had entered and not completed at its last flush
// (schema v5). The writer replaces the rank's rows at every flush
// (RankWriter::replace_inflight), so the table always holds the latest
// account; the merge copies it like any per-rank table.
#include "profiler/store/rows.h"

namespace ddpscope::store {
namespace {

constexpr int kInflightSince = 5;
constexpr Column kInflightColumns[] = {
    {"rank", "INTEGER"},   {"comm_id", "INTEGER"},       {"comm_rank", "INTEGER"},
    {"nranks", "INTEGER"}, {"seq", "INTEGER"},           {"op", "TEXT"},
    {"dtype", "TEXT"},     {"count", "INTEGER"},         {"bytes", "INTEGER"},
    {"tid", "INTEGER"},    {"host_start_ns", "INTEGER"}, {"seen_ns", "INTEGER"},
    {"state", "TEXT"}};

std::string_view state_name(InflightState s) {
  return s == InflightState::enqueued ? "enqueued" : "running";
}

}  // namespace

const TableSpec& Row<InflightRecord>::table() {
  static const TableSpec t{.name = "inflight",
                           .columns = kInflightColumns,
                           .since_version = kInflightSince,
                           .appended = false};
  return t;
}

void Row<InflightRecord>::bind(Statement& s, int b, const InflightRecord& r) {
  s.bind(b + 1, int64_t(r.rank));
  s.bind(b + 2, int64_t(r.comm_id));
  s.bind(b + 3, int64_t(r.comm_rank));
  s.bind(b + 4, int64_t(r.nranks));
  s.bind(b + 5, int64_t(r.seq));
  s.bind_text(b + 6, name_of(r.op));
  s.bind_text(b + 7, name_of(r.dtype));
  s.bind(b + 8, int64_t(r.count));
  s.bind(b + 9, int64_t(r.bytes));
  s.bind(b + 10, int64_t(r.tid));
  s.bind_time(b + 11, r.host_start_ns);
  s.bind_time(b + 12, r.seen_ns);
  s.bind_text(b + 13, state_name(r.state));
}

InflightRecord Row<InflightRecord>::read(const Statement& s) {
  InflightRecord r;
  r.rank = int32_t(s.int64(0));
  r.comm_id = uint64_t(s.int64(1));
  r.comm_rank = int32_t(s.int64(2));
  r.nranks = int32_t(s.int64(3));
  r.seq = uint64_t(s.int64(4));
  r.op = parse_op(s.text_view(5)).value_or(Op::allreduce);
  r.dtype = parse_dtype(s.text_view(6)).value_or(Dtype::unknown);
  r.count = uint64_t(s.int64(7));
  r.bytes = uint64_t(s.int64(8));
  r.tid = uint32_t(s.int64(9));
  r.host_start_ns = s.time(10);
  r.seen_ns = s.time(11);
  r.state = s.text_view(12) == "enqueued" ? InflightState::enqueued : InflightState::running;
  return r;
}

}  // namespace ddpscope::store
