// DDP's own account of itself (schema v2): facts about each DDP instance and
// the Python regions that issued collectives (profiler/core/records.h).
#include "profiler/store/rows.h"

namespace ddpscope::store {
namespace {

constexpr Column kDdpInfoColumns[] = {{"rank", "INTEGER"},
                                      {"instance", "INTEGER"},
                                      {"key", "TEXT"},
                                      {"value", "TEXT"},
                                      {"recorded_ns", "INTEGER"}};

constexpr Column kDdpRegionColumns[] = {
    {"rank", "INTEGER"},   {"instance", "INTEGER"},  {"kind", "TEXT"},       {"bucket", "INTEGER"},
    {"pg_key", "INTEGER"}, {"seq_begin", "INTEGER"}, {"seq_end", "INTEGER"}, {"flags", "INTEGER"},
    {"tid", "INTEGER"},    {"start_ns", "INTEGER"},  {"end_ns", "INTEGER"}};

}  // namespace

const TableSpec& Row<DdpInfoRecord>::table() {
  static const TableSpec t{.name = "ddp_info", .columns = kDdpInfoColumns, .since_version = 2};
  return t;
}

void Row<DdpInfoRecord>::bind(Statement& s, int b, const DdpInfoRecord& r) {
  s.bind(b + 1, int64_t(r.rank));
  s.bind(b + 2, int64_t(r.instance));
  s.bind_text(b + 3, r.key);
  s.bind_text(b + 4, r.value);
  s.bind_time(b + 5, r.recorded_ns);
}

DdpInfoRecord Row<DdpInfoRecord>::read(const Statement& s) {
  DdpInfoRecord r;
  r.rank = int32_t(s.int64(0));
  r.instance = int32_t(s.int64(1));
  r.key = s.text(2);
  r.value = s.text(3);
  r.recorded_ns = s.time(4);
  return r;
}

const TableSpec& Row<DdpRegionRecord>::table() {
  static const TableSpec t{
      .name = "ddp_regions",
      .columns = kDdpRegionColumns,
      .indexes = "CREATE INDEX IF NOT EXISTS ddp_regions_by_rank ON ddp_regions(rank, start_ns);",
      .since_version = 2};
  return t;
}

void Row<DdpRegionRecord>::bind(Statement& s, int b, const DdpRegionRecord& r) {
  s.bind(b + 1, int64_t(r.rank));
  s.bind(b + 2, int64_t(r.instance));
  s.bind_text(b + 3, name_of(r.kind));
  s.bind(b + 4, int64_t(r.bucket));
  s.bind(b + 5, r.pg_key);
  s.bind(b + 6, r.seq_begin);
  s.bind(b + 7, r.seq_end);
  s.bind(b + 8, int64_t(r.flags));
  s.bind(b + 9, int64_t(r.tid));
  s.bind_time(b + 10, r.start_ns);
  s.bind_time(b + 11, r.end_ns);
}

DdpRegionRecord Row<DdpRegionRecord>::read(const Statement& s) {
  DdpRegionRecord r;
  r.rank = int32_t(s.int64(0));
  r.instance = int32_t(s.int64(1));
  r.kind = parse_ddp_region_kind(s.text_view(2)).value_or(DdpRegionKind::user);
  r.bucket = int32_t(s.int64(3));
  r.pg_key = s.int64(4);
  r.seq_begin = s.int64(5);
  r.seq_end = s.int64(6);
  r.flags = uint32_t(s.int64(7));
  r.tid = uint32_t(s.int64(8));
  r.start_ns = s.time(9);
  r.end_ns = s.time(10);
  return r;
}

}  // namespace ddpscope::store
