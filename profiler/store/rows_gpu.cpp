// The device side's tables: GPU activities (CUPTI), NVTX ranges, CUDA waits.
#include "profiler/store/rows.h"

namespace ddpscope::store {
namespace {

constexpr Column kKernelColumns[] = {
    {"rank", "INTEGER"},
    {"device", "INTEGER"},
    {"stream", "INTEGER"},
    {"name", "TEXT"},
    {"start_ns", "INTEGER"},
    {"end_ns", "INTEGER"},
    {"correlation", "INTEGER"},
    {.name = "collective_id", .type = "INTEGER", .collective_ref = true},
    {"kind", "TEXT"}};

constexpr Column kRangeColumns[] = {{"rank", "INTEGER"},     {"tid", "INTEGER"},
                                    {"domain", "TEXT"},      {"name", "TEXT"},
                                    {"start_ns", "INTEGER"}, {"end_ns", "INTEGER"}};

constexpr Column kSyncColumns[] = {{"rank", "INTEGER"},     {"tid", "INTEGER"},
                                   {"call", "TEXT"},        {"stream", "INTEGER"},
                                   {"start_ns", "INTEGER"}, {"end_ns", "INTEGER"}};

}  // namespace

const TableSpec& Row<KernelRecord>::table() {
  static const TableSpec t{
      .name = "kernels",
      .columns = kKernelColumns,
      .indexes = "CREATE INDEX IF NOT EXISTS kernels_by_rank ON kernels(rank, start_ns);"};
  return t;
}

void Row<KernelRecord>::bind(Statement& s, int b, const KernelRecord& k) {
  s.bind(b + 1, int64_t(k.rank));
  s.bind(b + 2, int64_t(k.device));
  s.bind(b + 3, int64_t(k.stream));
  s.bind_text(b + 4, k.name);
  s.bind_time(b + 5, k.start_ns);
  s.bind_time(b + 6, k.end_ns);
  s.bind(b + 7, int64_t(k.correlation));
  if (k.collective_id > 0)
    s.bind(b + 8, k.collective_id);
  else
    s.bind_null(b + 8);
  s.bind_text(b + 9, name_of(k.kind));
}

KernelRecord Row<KernelRecord>::read(const Statement& s) {
  KernelRecord k;
  k.rank = int32_t(s.int64(0));
  k.device = int32_t(s.int64(1));
  k.stream = uint64_t(s.int64(2));
  k.name = s.text(3);
  k.start_ns = s.time(4);
  k.end_ns = s.time(5);
  k.correlation = uint64_t(s.int64(6));
  k.collective_id = s.is_null(7) ? 0 : s.int64(7);
  k.kind = parse_kernel_kind(s.text_view(8)).value_or(KernelKind::compute);
  return k;
}

const TableSpec& Row<RangeRecord>::table() {
  static const TableSpec t{.name = "ranges", .columns = kRangeColumns};
  return t;
}

void Row<RangeRecord>::bind(Statement& s, int b, const RangeRecord& r) {
  s.bind(b + 1, int64_t(r.rank));
  s.bind(b + 2, int64_t(r.tid));
  s.bind_text(b + 3, r.domain);
  s.bind_text(b + 4, r.name);
  s.bind_time(b + 5, r.start_ns);
  s.bind_time(b + 6, r.end_ns);
}

RangeRecord Row<RangeRecord>::read(const Statement& s) {
  return {int32_t(s.int64(0)), uint32_t(s.int64(1)), s.text(2), s.text(3), s.time(4), s.time(5)};
}

const TableSpec& Row<SyncRecord>::table() {
  static const TableSpec t{.name = "syncs", .columns = kSyncColumns};
  return t;
}

void Row<SyncRecord>::bind(Statement& s, int b, const SyncRecord& r) {
  s.bind(b + 1, int64_t(r.rank));
  s.bind(b + 2, int64_t(r.tid));
  s.bind_text(b + 3, name_of(r.call));
  s.bind(b + 4, int64_t(r.stream));
  s.bind_time(b + 5, r.start_ns);
  s.bind_time(b + 6, r.end_ns);
}

SyncRecord Row<SyncRecord>::read(const Statement& s) {
  SyncRecord r;
  r.rank = int32_t(s.int64(0));
  r.tid = uint32_t(s.int64(1));
  r.call = parse_sync_call(s.text_view(2)).value_or(SyncCall::device_synchronize);
  r.stream = uint64_t(s.int64(3));
  r.start_ns = s.time(4);
  r.end_ns = s.time(5);
  return r;
}

}  // namespace ddpscope::store
