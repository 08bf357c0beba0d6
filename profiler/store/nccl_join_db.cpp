// The merge's side of nccl_join.h: reads one rank's rows from the merged
// database, writes the links, and the rows only the plugin saw.
#include <algorithm>
#include <climits>
#include <map>

#include "profiler/store/nccl_join.h"
#include "profiler/store/rows.h"
#include "profiler/store/schema.h"
#include "profiler/store/table.h"

namespace ddpscope::store {
namespace {

template <typename Record>
std::vector<Record> rows_of_rank(Connection& db, int rank) {
  Statement s(db, select_sql(Row<Record>::table(), kSchemaVersion) + " WHERE rank = ?");
  s.bind(1, int64_t(rank));
  std::vector<Record> out;
  while (s.step()) out.push_back(Row<Record>::read(s));
  return out;
}

template <typename Record>
void insert(Connection& db, const Record& r) {
  Statement s(db, insert_sql(Row<Record>::table(), 1));
  Row<Record>::bind(s, 0, r);
  s.run();
}

// A collective's kernel, first channel start to last channel stop, on the
// GPU's global timer.
struct GpuSpan {
  int64_t start = INT64_MAX, stop = 0;
};

// The GPU timer onto this rank's (merged, wall) timeline: NCCL's proxy
// reports a channel's start after the GPU began it, so the smallest
// host-minus-GPU difference is the closest bound on the offset.
struct KernelChannels {
  std::map<int64_t, GpuSpan> spans;  // by coll_key
  int64_t offset = INT64_MAX;

  explicit KernelChannels(const std::vector<NcclKernelChannelRecord>& rows) {
    for (const auto& k : rows) {
      if (k.coll_key <= 0 || k.gpu_start <= 0 || k.gpu_stop < k.gpu_start) continue;
      GpuSpan& s = spans[k.coll_key];
      s.start = std::min(s.start, k.gpu_start);
      s.stop = std::max(s.stop, k.gpu_stop);
      if (k.start_ns != kNoTime) offset = std::min(offset, k.start_ns - k.gpu_start);
    }
  }
  // Fills c's device times from the kernel channels, if NCCL reported any.
  bool time(int64_t coll_key, CollectiveRecord& c) const {
    auto it = spans.find(coll_key);
    if (it == spans.end() || offset == INT64_MAX) return false;
    c.start_ns = it->second.start + offset;
    c.end_ns = it->second.stop + offset;
    c.timing = Timing::kernel_channels;
    return true;
  }
};

// A collective's execution as the plugin saw it: its kernel's channels on the
// GPU timer, or, for a collective NCCL ran on copy engines (no kernel, no
// channels), its ceColl event's start and stop (timing ce_events).
bool plugin_time(const NcclPluginCollectiveRecord& p, const KernelChannels& channels,
                 CollectiveRecord& c) {
  if (channels.time(p.coll_key, c)) return true;
  if (!is_copy_engine(p) || p.start_ns == kNoTime || p.end_ns < p.start_ns) return false;
  c.start_ns = p.start_ns;
  c.end_ns = p.end_ns;
  c.timing = Timing::ce_events;
  return true;
}

void link_comm(Connection& db, int rank, const std::pair<int64_t, int32_t>& key, uint64_t id) {
  Statement s(db,
              "UPDATE nccl_plugin_comms SET comm_id = ? "
              "WHERE rank = ? AND comm_hash = ? AND comm_rank = ?");
  s.bind(1, int64_t(id));
  s.bind(2, int64_t(rank));
  s.bind(3, key.first);
  s.bind(4, int64_t(key.second));
  s.run();
}

void link_collective(Connection& db, int rank, int64_t coll_key, int64_t id) {
  Statement s(
      db, "UPDATE nccl_plugin_collectives SET collective_id = ? WHERE rank = ? AND coll_key = ?");
  s.bind(1, id);
  s.bind(2, int64_t(rank));
  s.bind(3, coll_key);
  s.run();
}

// A hook row NCCL gave no device time (no CUPTI, no CUDA event) takes the
// plugin's: the kernel channels', or a copy-engine collective's CE span.
void time_from_plugin(Connection& db, const KernelChannels& channels,
                      const NcclPluginCollectiveRecord& p, const CollectiveRecord& hook) {
  if (hook.timing != Timing::none && hook.timing != Timing::host) return;
  CollectiveRecord c = hook;
  if (!plugin_time(p, channels, c)) return;
  Statement s(db, "UPDATE collectives SET start_ns = ?, end_ns = ?, timing = ? WHERE id = ?");
  s.bind_time(1, c.start_ns);
  s.bind_time(2, c.end_ns);
  s.bind_text(3, name_of(c.timing));
  s.bind(4, c.id);
  s.run();
}

CollectiveRecord from_plugin(const NcclPluginCollectiveRecord& p, const NcclPluginCommRecord& comm,
                             uint64_t seq) {
  CollectiveRecord c;
  c.rank = p.rank;
  c.comm_id = uint64_t(p.comm_hash);
  c.comm_rank = p.comm_rank;
  c.nranks = comm.nranks;
  c.seq = seq;
  c.op = op_of_nccl_func(p.func).value_or(Op::allreduce);
  c.dtype = dtype_of_nccl_name(p.dtype);
  c.count = uint64_t(p.count);
  c.bytes = message_bytes(c.op, c.count, dtype_bytes(c.dtype), c.nranks);
  c.root = p.root;
  c.tid = p.tid;
  c.host_start_ns = p.start_ns;
  c.host_end_ns = p.end_ns;
  return c;
}

// A communicator only the plugin saw: its `comms` row and its collectives,
// numbered in the order NCCL started them (coll_key order), as every rank
// launches a communicator's collectives in one order.
int64_t write_plugin_only(Connection& db, const NcclPluginCommRecord& comm,
                          std::vector<const NcclPluginCollectiveRecord*> calls,
                          const KernelChannels& channels, int64_t& next_id) {
  CommRecord cr;
  cr.rank = comm.rank;
  cr.comm_id = uint64_t(comm.comm_hash);
  cr.nranks = comm.nranks;
  cr.comm_rank = comm.comm_rank;
  cr.backend = Backend::nccl;
  cr.origin = CommOrigin::nccl_plugin;
  cr.created_ns = comm.recorded_ns;
  insert(db, cr);
  link_comm(db, comm.rank, {comm.comm_hash, comm.comm_rank}, cr.comm_id);
  std::sort(calls.begin(), calls.end(), [](auto* a, auto* b) { return a->coll_key < b->coll_key; });
  uint64_t seq = 0;
  for (const auto* p : calls) {
    if (!op_of_nccl_func(p->func)) continue;
    CollectiveRecord c = from_plugin(*p, comm, seq++);
    c.id = next_id++;
    plugin_time(*p, channels, c);
    insert(db, c);
    link_collective(db, p->rank, p->coll_key, c.id);
  }
  return int64_t(seq);
}

}  // namespace

int64_t join_nccl_plugin(Connection& db, int rank) {
  auto plugin_comms = rows_of_rank<NcclPluginCommRecord>(db, rank);
  if (plugin_comms.empty()) return 0;
  auto plugin_colls = rows_of_rank<NcclPluginCollectiveRecord>(db, rank);
  auto comms = rows_of_rank<CommRecord>(db, rank);
  auto colls = rows_of_rank<CollectiveRecord>(db, rank);
  KernelChannels channels(rows_of_rank<NcclKernelChannelRecord>(db, rank));
  PluginLinks links = link_plugin_rows(comms, colls, plugin_comms, plugin_colls);

  std::map<int64_t, const CollectiveRecord*> hook_by_id;
  for (const auto& c : colls) hook_by_id[c.id] = &c;
  std::map<int64_t, const NcclPluginCollectiveRecord*> plugin_by_key;
  for (const auto& p : plugin_colls) plugin_by_key[p.coll_key] = &p;
  for (const auto& [key, id] : links.comms) link_comm(db, rank, key, id);
  for (const auto& [coll_key, id] : links.collectives) {
    link_collective(db, rank, coll_key, id);
    time_from_plugin(db, channels, *plugin_by_key.at(coll_key), *hook_by_id.at(id));
  }

  Statement last(db, "SELECT coalesce(max(id), 0) FROM collectives");
  int64_t next_id = (last.step() ? last.int64(0) : 0) + 1;
  int64_t written = 0;
  for (const auto& pc : plugin_comms) {
    std::pair<int64_t, int32_t> key{pc.comm_hash, pc.comm_rank};
    if (links.comms.count(key)) continue;
    std::vector<const NcclPluginCollectiveRecord*> calls;
    for (const auto& p : plugin_colls)
      if (p.comm_hash == pc.comm_hash && p.comm_rank == pc.comm_rank && p.coll_key > 0)
        calls.push_back(&p);
    written += write_plugin_only(db, pc, calls, channels, next_id);
  }
  return written;
}

}  // namespace ddpscope::store
