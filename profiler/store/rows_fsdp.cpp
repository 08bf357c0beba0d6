// FSDP2's own account of itself (schema v7): facts about each unit and the
// collectives and moments FSDP noted for it (profiler/core/records.h).
#include "profiler/store/rows.h"

namespace ddpscope::store {
namespace {

constexpr int kFsdpSince = 7;

constexpr Column kFsdpInfoColumns[] = {{"rank", "INTEGER"},
                                       {"unit", "INTEGER"},
                                       {"key", "TEXT"},
                                       {"value", "TEXT"},
                                       {"recorded_ns", "INTEGER"}};

constexpr Column kFsdpRegionColumns[] = {
    {"rank", "INTEGER"},      {"unit", "INTEGER"},    {"kind", "TEXT"},     {"pg_key", "INTEGER"},
    {"seq_begin", "INTEGER"}, {"seq_end", "INTEGER"}, {"flags", "INTEGER"}, {"tid", "INTEGER"},
    {"start_ns", "INTEGER"},  {"end_ns", "INTEGER"}};

}  // namespace

const TableSpec& Row<FsdpInfoRecord>::table() {
  static const TableSpec t{
      .name = "fsdp_info", .columns = kFsdpInfoColumns, .since_version = kFsdpSince};
  return t;
}

void Row<FsdpInfoRecord>::bind(Statement& s, int b, const FsdpInfoRecord& r) {
  s.bind(b + 1, int64_t(r.rank));
  s.bind(b + 2, int64_t(r.unit));
  s.bind_text(b + 3, r.key);
  s.bind_text(b + 4, r.value);
  s.bind_time(b + 5, r.recorded_ns);
}

FsdpInfoRecord Row<FsdpInfoRecord>::read(const Statement& s) {
  FsdpInfoRecord r;
  r.rank = int32_t(s.int64(0));
  r.unit = int32_t(s.int64(1));
  r.key = s.text(2);
  r.value = s.text(3);
  r.recorded_ns = s.time(4);
  return r;
}

const TableSpec& Row<FsdpRegionRecord>::table() {
  static const TableSpec t{
      .name = "fsdp_regions", .columns = kFsdpRegionColumns, .since_version = kFsdpSince};
  return t;
}

void Row<FsdpRegionRecord>::bind(Statement& s, int b, const FsdpRegionRecord& r) {
  s.bind(b + 1, int64_t(r.rank));
  s.bind(b + 2, int64_t(r.unit));
  s.bind_text(b + 3, name_of(r.kind));
  s.bind(b + 4, r.pg_key);
  s.bind(b + 5, r.seq_begin);
  s.bind(b + 6, r.seq_end);
  s.bind(b + 7, int64_t(r.flags));
  s.bind(b + 8, int64_t(r.tid));
  s.bind_time(b + 9, r.start_ns);
  s.bind_time(b + 10, r.end_ns);
}

FsdpRegionRecord Row<FsdpRegionRecord>::read(const Statement& s) {
  FsdpRegionRecord r;
  r.rank = int32_t(s.int64(0));
  r.unit = int32_t(s.int64(1));
  r.kind = parse_fsdp_region_kind(s.text_view(2)).value_or(FsdpRegionKind::wait);
  r.pg_key = s.int64(3);
  r.seq_begin = s.int64(4);
  r.seq_end = s.int64(5);
  r.flags = uint32_t(s.int64(6));
  r.tid = uint32_t(s.int64(7));
  r.start_ns = s.time(8);
  r.end_ns = s.time(9);
  return r;
}

}  // namespace ddpscope::store
