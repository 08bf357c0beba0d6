// The steps of NCCL's copy-engine collectives (schema v6): each
// synchronisation and copy batch NCCL's profiler (v6) reports under a ceColl,
// keyed to its collective's row in nccl_plugin_collectives by coll_key.
#include "profiler/store/rows.h"

namespace ddpscope::store {
namespace {

constexpr int kCeSince = 6;

constexpr Column kCeOpColumns[] = {
    {"rank", "INTEGER"},     {"comm_hash", "INTEGER"}, {"coll_key", "INTEGER"},
    {"kind", "TEXT"},        {"nranks", "INTEGER"},    {"is_complete", "INTEGER"},
    {"num_ops", "INTEGER"},  {"bytes", "INTEGER"},     {"intra_sync", "INTEGER"},
    {"start_ns", "INTEGER"}, {"end_ns", "INTEGER"}};

}  // namespace

const TableSpec& Row<NcclCeOpRecord>::table() {
  static const TableSpec t{
      .name = "nccl_ce_ops", .columns = kCeOpColumns, .since_version = kCeSince};
  return t;
}

void Row<NcclCeOpRecord>::bind(Statement& s, int b, const NcclCeOpRecord& r) {
  s.bind(b + 1, int64_t(r.rank));
  s.bind(b + 2, r.comm_hash);
  s.bind(b + 3, r.coll_key);
  s.bind_text(b + 4, r.kind);
  s.bind(b + 5, int64_t(r.nranks));
  s.bind(b + 6, int64_t(r.is_complete));
  s.bind(b + 7, int64_t(r.num_ops));
  s.bind(b + 8, r.bytes);
  s.bind(b + 9, int64_t(r.intra_sync));
  s.bind_time(b + 10, r.start_ns);
  s.bind_time(b + 11, r.end_ns);
}

NcclCeOpRecord Row<NcclCeOpRecord>::read(const Statement& s) {
  NcclCeOpRecord r;
  r.rank = int32_t(s.int64(0));
  r.comm_hash = s.int64(1);
  r.coll_key = s.int64(2);
  r.kind = s.text(3);
  r.nranks = int32_t(s.int64(4));
  r.is_complete = s.int64(5) != 0;
  r.num_ops = int32_t(s.int64(6));
  r.bytes = s.int64(7);
  r.intra_sync = s.int64(8) != 0;
  r.start_ns = s.time(9);
  r.end_ns = s.time(10);
  return r;
}

}  // namespace ddpscope::store
