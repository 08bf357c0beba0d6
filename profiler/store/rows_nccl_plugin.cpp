// NCCL's own account from its profiler plugin (schema v3): communicators,
// collectives with the algorithm, protocol and channels NCCL chose, and the
// proxy's network operations and steps (profiler/core/records.h).
#include "profiler/store/rows.h"

namespace ddpscope::store {
namespace {

constexpr int kPluginSince = 3;
constexpr int kKeys = 4;  // the join keys came with schema v4

constexpr Column kPluginCommColumns[] = {
    {"rank", "INTEGER"},        {"comm_hash", "INTEGER"},
    {"name", "TEXT"},           {"nnodes", "INTEGER"},
    {"nranks", "INTEGER"},      {"comm_rank", "INTEGER"},
    {"recorded_ns", "INTEGER"}, {.name = "comm_id", .type = "INTEGER", .since_version = kKeys}};

constexpr Column kCollColumns[] = {
    {"rank", "INTEGER"},
    {"comm_hash", "INTEGER"},
    {"seq", "INTEGER"},
    {"func", "TEXT"},
    {"algo", "TEXT"},
    {"proto", "TEXT"},
    {"nchannels", "INTEGER"},
    {"nwarps", "INTEGER"},
    {"count", "INTEGER"},
    {"dtype", "TEXT"},
    {"root", "INTEGER"},
    {"tid", "INTEGER"},
    {"start_ns", "INTEGER"},
    {"end_ns", "INTEGER"},
    {.name = "comm_rank", .type = "INTEGER", .since_version = kKeys},
    {.name = "coll_key", .type = "INTEGER", .since_version = kKeys},
    {.name = "collective_id", .type = "INTEGER", .collective_ref = true, .since_version = kKeys}};

constexpr Column kOpColumns[] = {
    {"rank", "INTEGER"},     {"comm_hash", "INTEGER"},
    {"seq", "INTEGER"},      {"channel", "INTEGER"},
    {"peer", "INTEGER"},     {"is_send", "INTEGER"},
    {"nsteps", "INTEGER"},   {"chunk_bytes", "INTEGER"},
    {"start_ns", "INTEGER"}, {"progress_ns", "INTEGER"},
    {"end_ns", "INTEGER"},   {.name = "coll_key", .type = "INTEGER", .since_version = kKeys}};

constexpr Column kStepColumns[] = {{"rank", "INTEGER"},
                                   {"comm_hash", "INTEGER"},
                                   {"seq", "INTEGER"},
                                   {"channel", "INTEGER"},
                                   {"peer", "INTEGER"},
                                   {"is_send", "INTEGER"},
                                   {"step", "INTEGER"},
                                   {"bytes", "INTEGER"},
                                   {"start_ns", "INTEGER"},
                                   {"gpu_wait_ns", "INTEGER"},
                                   {"peer_wait_ns", "INTEGER"},
                                   {"net_wait_ns", "INTEGER"},
                                   {"flush_wait_ns", "INTEGER"},
                                   {"end_ns", "INTEGER"},
                                   {.name = "coll_key", .type = "INTEGER", .since_version = kKeys}};

constexpr Column kKernelChannelColumns[] = {{"rank", "INTEGER"},      {"comm_hash", "INTEGER"},
                                            {"coll_key", "INTEGER"},  {"channel", "INTEGER"},
                                            {"gpu_start", "INTEGER"}, {"gpu_stop", "INTEGER"},
                                            {"start_ns", "INTEGER"},  {"end_ns", "INTEGER"}};

// A proxy op and its steps share their first six columns: which rank,
// communicator, collective, channel, peer and direction.
template <typename Proxy>
void bind_proxy_identity(Statement& s, int b, const Proxy& r) {
  s.bind(b + 1, int64_t(r.rank));
  s.bind(b + 2, r.comm_hash);
  s.bind(b + 3, r.seq);
  s.bind(b + 4, int64_t(r.channel));
  s.bind(b + 5, int64_t(r.peer));
  s.bind(b + 6, int64_t(r.is_send));
}

template <typename Proxy>
void read_proxy_identity(const Statement& s, Proxy& r) {
  r.rank = int32_t(s.int64(0));
  r.comm_hash = s.int64(1);
  r.seq = s.int64(2);
  r.channel = int32_t(s.int64(3));
  r.peer = int32_t(s.int64(4));
  r.is_send = s.int64(5) != 0;
}

}  // namespace

const TableSpec& Row<NcclPluginCommRecord>::table() {
  static const TableSpec t{
      .name = "nccl_plugin_comms", .columns = kPluginCommColumns, .since_version = kPluginSince};
  return t;
}

void Row<NcclPluginCommRecord>::bind(Statement& s, int b, const NcclPluginCommRecord& r) {
  s.bind(b + 1, int64_t(r.rank));
  s.bind(b + 2, r.comm_hash);
  s.bind_text(b + 3, r.name);
  s.bind(b + 4, int64_t(r.nnodes));
  s.bind(b + 5, int64_t(r.nranks));
  s.bind(b + 6, int64_t(r.comm_rank));
  s.bind_time(b + 7, r.recorded_ns);
  s.bind(b + 8, int64_t(r.comm_id));
}

NcclPluginCommRecord Row<NcclPluginCommRecord>::read(const Statement& s) {
  NcclPluginCommRecord r;
  r.rank = int32_t(s.int64(0));
  r.comm_hash = s.int64(1);
  r.name = s.text(2);
  r.nnodes = int32_t(s.int64(3));
  r.nranks = int32_t(s.int64(4));
  r.comm_rank = int32_t(s.int64(5));
  r.recorded_ns = s.time(6);
  r.comm_id = uint64_t(s.int64(7));
  return r;
}

const TableSpec& Row<NcclPluginCollectiveRecord>::table() {
  static const TableSpec t{.name = "nccl_plugin_collectives",
                           .columns = kCollColumns,
                           .indexes =
                               "CREATE INDEX IF NOT EXISTS nccl_plugin_collectives_by_seq "
                               "ON nccl_plugin_collectives(rank, comm_hash, seq);",
                           .since_version = kPluginSince};
  return t;
}

void Row<NcclPluginCollectiveRecord>::bind(Statement& s, int b,
                                           const NcclPluginCollectiveRecord& r) {
  s.bind(b + 1, int64_t(r.rank));
  s.bind(b + 2, r.comm_hash);
  s.bind(b + 3, r.seq);
  s.bind_text(b + 4, r.func);
  s.bind_text(b + 5, r.algo);
  s.bind_text(b + 6, r.proto);
  s.bind(b + 7, int64_t(r.nchannels));
  s.bind(b + 8, int64_t(r.nwarps));
  s.bind(b + 9, r.count);
  s.bind_text(b + 10, r.dtype);
  s.bind(b + 11, int64_t(r.root));
  s.bind(b + 12, int64_t(r.tid));
  s.bind_time(b + 13, r.start_ns);
  s.bind_time(b + 14, r.end_ns);
  s.bind(b + 15, int64_t(r.comm_rank));
  s.bind(b + 16, r.coll_key);
  // Joined by the merge (nccl_join.h); a rank file's rows are not yet: NULL,
  // which the merge's id shift leaves NULL (0 would become an id).
  if (r.collective_id > 0)
    s.bind(b + 17, r.collective_id);
  else
    s.bind_null(b + 17);
}

NcclPluginCollectiveRecord Row<NcclPluginCollectiveRecord>::read(const Statement& s) {
  NcclPluginCollectiveRecord r;
  r.rank = int32_t(s.int64(0));
  r.comm_hash = s.int64(1);
  r.seq = s.int64(2);
  r.func = s.text(3);
  r.algo = s.text(4);
  r.proto = s.text(5);
  r.nchannels = int32_t(s.int64(6));
  r.nwarps = int32_t(s.int64(7));
  r.count = s.int64(8);
  r.dtype = s.text(9);
  r.root = int32_t(s.int64(10));
  r.tid = uint32_t(s.int64(11));
  r.start_ns = s.time(12);
  r.end_ns = s.time(13);
  r.comm_rank = s.is_null(14) ? -1 : int32_t(s.int64(14));
  r.coll_key = s.int64(15);
  r.collective_id = s.int64(16);
  return r;
}

const TableSpec& Row<NcclProxyOpRecord>::table() {
  static const TableSpec t{
      .name = "nccl_proxy_ops", .columns = kOpColumns, .since_version = kPluginSince};
  return t;
}

void Row<NcclProxyOpRecord>::bind(Statement& s, int b, const NcclProxyOpRecord& r) {
  bind_proxy_identity(s, b, r);
  s.bind(b + 7, int64_t(r.nsteps));
  s.bind(b + 8, int64_t(r.chunk_bytes));
  s.bind_time(b + 9, r.start_ns);
  s.bind_time(b + 10, r.progress_ns);
  s.bind_time(b + 11, r.end_ns);
  s.bind(b + 12, r.coll_key);
}

NcclProxyOpRecord Row<NcclProxyOpRecord>::read(const Statement& s) {
  NcclProxyOpRecord r;
  read_proxy_identity(s, r);
  r.nsteps = int32_t(s.int64(6));
  r.chunk_bytes = int32_t(s.int64(7));
  r.start_ns = s.time(8);
  r.progress_ns = s.time(9);
  r.end_ns = s.time(10);
  r.coll_key = s.int64(11);
  return r;
}

const TableSpec& Row<NcclProxyStepRecord>::table() {
  static const TableSpec t{
      .name = "nccl_proxy_steps", .columns = kStepColumns, .since_version = kPluginSince};
  return t;
}

void Row<NcclProxyStepRecord>::bind(Statement& s, int b, const NcclProxyStepRecord& r) {
  bind_proxy_identity(s, b, r);
  s.bind(b + 7, int64_t(r.step));
  s.bind(b + 8, r.bytes);
  s.bind_time(b + 9, r.start_ns);
  s.bind_time(b + 10, r.gpu_wait_ns);
  s.bind_time(b + 11, r.peer_wait_ns);
  s.bind_time(b + 12, r.net_wait_ns);
  s.bind_time(b + 13, r.flush_wait_ns);
  s.bind_time(b + 14, r.end_ns);
  s.bind(b + 15, r.coll_key);
}

NcclProxyStepRecord Row<NcclProxyStepRecord>::read(const Statement& s) {
  NcclProxyStepRecord r;
  read_proxy_identity(s, r);
  r.step = int32_t(s.int64(6));
  r.bytes = s.int64(7);
  r.start_ns = s.time(8);
  r.gpu_wait_ns = s.time(9);
  r.peer_wait_ns = s.time(10);
  r.net_wait_ns = s.time(11);
  r.flush_wait_ns = s.time(12);
  r.end_ns = s.time(13);
  r.coll_key = s.int64(14);
  return r;
}

const TableSpec& Row<NcclKernelChannelRecord>::table() {
  static const TableSpec t{
      .name = "nccl_kernel_channels", .columns = kKernelChannelColumns, .since_version = kKeys};
  return t;
}

void Row<NcclKernelChannelRecord>::bind(Statement& s, int b, const NcclKernelChannelRecord& r) {
  s.bind(b + 1, int64_t(r.rank));
  s.bind(b + 2, r.comm_hash);
  s.bind(b + 3, r.coll_key);
  s.bind(b + 4, int64_t(r.channel));
  s.bind(b + 5, r.gpu_start);
  s.bind(b + 6, r.gpu_stop);
  s.bind_time(b + 7, r.start_ns);
  s.bind_time(b + 8, r.end_ns);
}

NcclKernelChannelRecord Row<NcclKernelChannelRecord>::read(const Statement& s) {
  NcclKernelChannelRecord r;
  r.rank = int32_t(s.int64(0));
  r.comm_hash = s.int64(1);
  r.coll_key = s.int64(2);
  r.channel = int32_t(s.int64(3));
  r.gpu_start = s.int64(4);
  r.gpu_stop = s.int64(5);
  r.start_ns = s.time(6);
  r.end_ns = s.time(7);
  return r;
}

}  // namespace ddpscope::store
