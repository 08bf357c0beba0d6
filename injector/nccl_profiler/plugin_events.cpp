// NCCL's profiler plugin as a capture source (injector/runtime/source.h):
// the ring events of closed plugin events, and their rows
// (profiler/store/rows_nccl_plugin.cpp).
#include "injector/nccl_profiler/plugin_events.h"

#include <string>

#include "injector/runtime/capture.h"
#include "injector/runtime/name_table.h"
#include "injector/runtime/source.h"
#include "profiler/core/clock.h"

namespace ddpscope::inject::nccl_profiler {
namespace {

// Named apart from profiler_abi.h's event types (kColl, kKernelCh, ...): in a
// unity batch with profiler_plugin.cpp both sit in one unnamed namespace, where
// these would hide those.
enum Kind : uint8_t { kCommEvent, kCollEvent, kOpEvent, kStepEvent, kKernelChEvent, kCeOpEvent };

struct CommEvent {
  uint64_t comm_hash, t;
  uint32_t name;
  int32_t nnodes, nranks, rank;
};

struct CollEvent {
  uint64_t comm_hash;
  int64_t seq, coll_key;
  uint64_t count, t_start, t_end;
  uint32_t func, algo, proto, dtype, tid;
  int32_t root, comm_rank;
  uint8_t nchannels, nwarps;
};

struct OpEvent {
  uint64_t comm_hash;
  int64_t seq, coll_key;
  uint64_t t_start, t_progress, t_end;
  int32_t channel, peer, nsteps, chunk;
  uint8_t is_send;
};

struct StepEvent {
  uint64_t comm_hash;
  int64_t seq, coll_key;
  uint64_t t_start, t_state[kStepStates], t_end, bytes;
  int32_t channel, peer, step;
  uint8_t is_send;
};

struct KernelChEvent {
  uint64_t comm_hash;
  int64_t coll_key;
  uint64_t t_start, t_end, gpu_start, gpu_stop;
  int32_t channel;
};

struct CeOpEvent {
  uint64_t comm_hash;
  int64_t coll_key;
  uint64_t t_start, t_end, bytes;
  int32_t nranks, num_ops;
  uint8_t kind;
  bool is_complete, intra_sync;
};

std::string name(uint32_t id) { return std::string(name_table().name(id)); }

// Ticks 0: the event never reached that point.
int64_t ns(const Rows& rows, uint64_t ticks) { return ticks ? rows.to_ns(ticks) : kNoTime; }

void convert_comm(const CommEvent& c, Rows& rows) {
  rows.add(NcclPluginCommRecord{0, int64_t(c.comm_hash), name(c.name), c.nnodes, c.nranks, c.rank,
                                rows.to_ns(c.t)});
}

void convert_coll(const CollEvent& c, Rows& rows) {
  NcclPluginCollectiveRecord r;
  r.comm_hash = int64_t(c.comm_hash);
  r.seq = c.seq;
  r.func = name(c.func);
  r.algo = name(c.algo);
  r.proto = name(c.proto);
  r.dtype = name(c.dtype);
  r.nchannels = c.nchannels;
  r.nwarps = c.nwarps;
  r.count = int64_t(c.count);
  r.root = c.root;
  r.tid = c.tid;
  r.start_ns = ns(rows, c.t_start);
  r.end_ns = ns(rows, c.t_end);
  r.comm_rank = c.comm_rank;
  r.coll_key = c.coll_key;
  rows.add(std::move(r));
}

void convert_op(const OpEvent& o, Rows& rows) {
  rows.add(NcclProxyOpRecord{0, int64_t(o.comm_hash), o.seq, o.channel, o.peer, o.is_send != 0,
                             o.nsteps, o.chunk, ns(rows, o.t_start), ns(rows, o.t_progress),
                             ns(rows, o.t_end), o.coll_key});
}

void convert_step(const StepEvent& s, Rows& rows) {
  NcclProxyStepRecord r;
  r.comm_hash = int64_t(s.comm_hash);
  r.seq = s.seq;
  r.channel = s.channel;
  r.peer = s.peer;
  r.is_send = s.is_send != 0;
  r.step = s.step;
  r.bytes = int64_t(s.bytes);
  r.start_ns = ns(rows, s.t_start);
  r.gpu_wait_ns = ns(rows, s.t_state[kGpuWait]);
  r.peer_wait_ns = ns(rows, s.t_state[kPeerWait]);
  r.net_wait_ns = ns(rows, s.t_state[kNetWait]);
  r.flush_wait_ns = ns(rows, s.t_state[kFlushWait]);
  r.end_ns = ns(rows, s.t_end);
  r.coll_key = s.coll_key;
  rows.add(r);
}

void convert_kernel_ch(const KernelChEvent& k, Rows& rows) {
  rows.add(NcclKernelChannelRecord{0, int64_t(k.comm_hash), k.coll_key, k.channel,
                                   int64_t(k.gpu_start), int64_t(k.gpu_stop), ns(rows, k.t_start),
                                   ns(rows, k.t_end)});
}

void convert_ce_op(const CeOpEvent& o, Rows& rows) {
  NcclCeOpRecord r;
  r.comm_hash = int64_t(o.comm_hash);
  r.coll_key = o.coll_key;
  r.kind = o.kind == kCeSyncOp ? "sync" : "batch";
  r.nranks = o.nranks;
  r.is_complete = o.is_complete;
  r.num_ops = o.num_ops;
  r.bytes = int64_t(o.bytes);
  r.intra_sync = o.intra_sync;
  r.start_ns = ns(rows, o.t_start);
  r.end_ns = ns(rows, o.t_end);
  rows.add(std::move(r));
}

void convert(const Event& e, Rows& rows) {
  switch (e.kind) {
    case kCommEvent:
      return convert_comm(e.as<CommEvent>(), rows);
    case kCollEvent:
      return convert_coll(e.as<CollEvent>(), rows);
    case kOpEvent:
      return convert_op(e.as<OpEvent>(), rows);
    case kStepEvent:
      return convert_step(e.as<StepEvent>(), rows);
    case kKernelChEvent:
      return convert_kernel_ch(e.as<KernelChEvent>(), rows);
    case kCeOpEvent:
      return convert_ce_op(e.as<CeOpEvent>(), rows);
  }
}

SourceId source() {
  static const SourceId id = register_source({"nccl_profiler", convert});
  return id;
}

template <typename Body>
Body* reserve(ThreadState& t, Kind kind, EventClass c = EventClass::other) {
  return reserve_event_body<Body>(t, source(), kind, c);
}

}  // namespace

void Lineage::copy_from(const Lineage& p) {
  comm_hash.store(p.comm_hash.load(std::memory_order_relaxed), std::memory_order_relaxed);
  seq.store(p.seq.load(std::memory_order_relaxed), std::memory_order_relaxed);
  coll_key.store(p.coll_key.load(std::memory_order_relaxed), std::memory_order_relaxed);
  channel.store(p.channel.load(std::memory_order_relaxed), std::memory_order_relaxed);
  peer.store(p.peer.load(std::memory_order_relaxed), std::memory_order_relaxed);
  is_send.store(p.is_send.load(std::memory_order_relaxed), std::memory_order_relaxed);
}

// Callers hold a ReentrancyGuard: attaching a thread may start the runtime.
void emit_comm(uint64_t comm_hash, const char* comm_name, int nnodes, int nranks, int rank) {
  uint32_t name_id = name_table().intern(comm_name);
  ThreadState& t = this_thread();
  auto* e = reserve<CommEvent>(t, kCommEvent, EventClass::comm);
  if (!e) return;
  *e = CommEvent{comm_hash, clock::ticks(), name_id, nnodes, nranks, rank};
  publish_event(t);
}

void emit_coll(ThreadState& t, const CollSlot& s, uint64_t t_end) {
  auto* e = reserve<CollEvent>(t, kCollEvent, EventClass::comm);
  if (!e) return;
  *e = CollEvent{s.id.comm_hash.load(std::memory_order_relaxed),
                 s.id.seq.load(std::memory_order_relaxed),
                 s.id.coll_key.load(std::memory_order_relaxed),
                 s.count,
                 s.t_start,
                 t_end,
                 s.func,
                 s.algo,
                 s.proto,
                 s.dtype,
                 s.tid,
                 s.root,
                 s.comm_rank,
                 s.nchannels,
                 s.nwarps};
  publish_event(t);
}

void emit_op(ThreadState& t, const OpSlot& s, uint64_t t_end) {
  auto* e = reserve<OpEvent>(t, kOpEvent);
  if (!e) return;
  *e = OpEvent{s.id.comm_hash.load(std::memory_order_relaxed),
               s.id.seq.load(std::memory_order_relaxed),
               s.id.coll_key.load(std::memory_order_relaxed),
               s.t_start,
               s.t_progress.load(std::memory_order_relaxed),
               t_end,
               s.id.channel.load(std::memory_order_relaxed),
               s.id.peer.load(std::memory_order_relaxed),
               s.nsteps,
               s.chunk,
               s.id.is_send.load(std::memory_order_relaxed)};
  publish_event(t);
}

void emit_step(ThreadState& t, const StepSlot& s, uint64_t t_end) {
  auto* e = reserve<StepEvent>(t, kStepEvent);
  if (!e) return;
  e->comm_hash = s.id.comm_hash.load(std::memory_order_relaxed);
  e->seq = s.id.seq.load(std::memory_order_relaxed);
  e->coll_key = s.id.coll_key.load(std::memory_order_relaxed);
  e->t_start = s.t_start;
  for (int i = 0; i < kStepStates; ++i)
    e->t_state[i] = s.t_state[i].load(std::memory_order_relaxed);
  e->t_end = t_end;
  e->bytes = s.bytes.load(std::memory_order_relaxed);
  e->channel = s.id.channel.load(std::memory_order_relaxed);
  e->peer = s.id.peer.load(std::memory_order_relaxed);
  e->step = s.step;
  e->is_send = s.id.is_send.load(std::memory_order_relaxed);
  publish_event(t);
}

void emit_kernel_ch(ThreadState& t, const KernelChSlot& s, uint64_t t_end) {
  auto* e = reserve<KernelChEvent>(t, kKernelChEvent);
  if (!e) return;
  *e = KernelChEvent{s.id.comm_hash.load(std::memory_order_relaxed),
                     s.id.coll_key.load(std::memory_order_relaxed),
                     s.t_start,
                     t_end,
                     s.gpu_start,
                     s.gpu_stop.load(std::memory_order_relaxed),
                     s.id.channel.load(std::memory_order_relaxed)};
  publish_event(t);
}

void emit_ce_op(ThreadState& t, const CeOpSlot& s, uint64_t t_end) {
  auto* e = reserve<CeOpEvent>(t, kCeOpEvent);
  if (!e) return;
  *e = CeOpEvent{s.id.comm_hash.load(std::memory_order_relaxed),
                 s.id.coll_key.load(std::memory_order_relaxed),
                 s.t_start,
                 t_end,
                 s.bytes,
                 s.nranks,
                 s.num_ops,
                 s.kind,
                 s.is_complete,
                 s.intra_sync};
  publish_event(t);
}

}  // namespace ddpscope::inject::nccl_profiler
