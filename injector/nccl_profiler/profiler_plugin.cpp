// NCCL's profiler plugin inside libddpscope_inject.so: NCCL (>= 2.27) dlopen()s
// the library NCCL_PROFILER_PLUGIN names and looks up "ncclProfiler_v6", then
// "ncclProfiler_v5", "ncclProfiler_v4" (profiler_abi.h). Living in the
// injector means one library for the hooks and the plugin, one set of rings
// and one rank file; where NCCL is linked statically (no hook can interpose)
// the plugin alone still records.
//
// Hot path (every collective, proxy op and network step): a pool slot taken
// with one CAS, a timestamp, at stop one ring event. No lock, no allocation.
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <string_view>
#include <type_traits>

#include "injector/nccl_profiler/plugin_events.h"
#include "injector/nccl_profiler/profiler_abi.h"
#include "injector/runtime/capture.h"
#include "injector/runtime/log.h"
#include "injector/runtime/name_table.h"
#include "profiler/core/clock.h"
#include "profiler/core/records.h"

namespace ddpscope::inject::nccl_profiler {
namespace {

// The events we ask NCCL for: collectives (algorithm, protocol, channels),
// the proxy's network operations and steps, and each channel's kernel start
// and stop on the GPU's timer (the collective's GPU time where no hook or
// CUPTI sees it: a statically linked NCCL). Not yet: groups, p2p, API-level
// events.
constexpr int kActivationMask = kColl | kProxyOp | kProxyStep | kKernelCh;
// v6 adds the collectives NCCL runs on copy engines, which launch no kernel
// (so no coll, kernel-channel or proxy event): the ceColl and its steps.
constexpr int kActivationMaskV6 = kActivationMask | kCeColl | kCeSync | kCeBatch;

struct PluginComm {
  uint64_t comm_hash;
  int rank;
};

SlotPool<CollSlot, 4096> g_colls;
SlotPool<OpSlot, 8192> g_ops;
SlotPool<StepSlot, 16384> g_steps;
SlotPool<KernelChSlot, 4096> g_kernel_chs;
SlotPool<CeOpSlot, 4096> g_ce_ops;
// Proxy ops of another process carry parents that are not ours. Every
// communicator's init stores it, from its own thread (TSan found the plain
// int written by concurrent inits while a proxy thread read it).
std::atomic<pid_t> g_pid{0};

// NCCL calls us from inside the hooks' real calls (this_thread().depth > 0), so only the
// runtime's state decides, not capturing().
bool recording() { return g_state.load(std::memory_order_relaxed) <= int(State::running); }

template <typename Slot, uint32_t N>
Slot* take(SlotPool<Slot, N>& pool, const char* what, uint64_t* ticket = nullptr) {
  Slot* s = pool.acquire(ticket);
  if (!s) notice_once(Notice::misc, "too many open NCCL %s events; one not recorded", what);
  return s;
}

// NCCL names a collective's function, algorithm, protocol and datatype with
// string literals of its own (ncclFuncToString and the like), the same few
// pointers every time: a pointer-keyed cache in front of the name table
// spares hashing four strings per collective. A hit is checked against the
// stored name, so a pointer that came to hold other text gets its own id.
// The slot is picked by a multiplicative hash (neighbouring literals would
// share slots under their low bits and evict each other on every collective),
// and a pointer may sit in either of two neighbouring slots.
uint32_t intern_nccl_name(const char* s) {
  constexpr int kSlots = 256;
  static std::atomic<uint64_t> cache[kSlots + 1];  // (pointer << 16) | id
  if (!s) return 0;
  auto key = uint64_t(reinterpret_cast<uintptr_t>(s));
  if (key >> 48) return name_table().intern(s);  // not a user-space x86-64/aarch64 pointer
  size_t at = size_t((key * 0x9E3779B97F4A7C15ull) >> 56);
  for (size_t i = at; i <= at + 1; ++i) {
    uint64_t v = cache[i].load(std::memory_order_relaxed);
    if (v >> 16 != key) continue;
    auto id = uint32_t(v & 0xffff);
    std::string_view name = name_table().name(id);
    if (strncmp(name.data(), s, name.size()) == 0 && s[name.size()] == '\0') return id;
  }
  uint32_t id = name_table().intern(s);
  if (id > 0xffff) return id;
  size_t free = cache[at].load(std::memory_order_relaxed) == 0 ? at : at + 1;
  cache[free].store(key << 16 | id, std::memory_order_relaxed);
  return id;
}

Result init(void** context, uint64_t comm_hash, int* mask, const char* name, int nnodes, int nranks,
            int rank, int activation) {
  *context = new PluginComm{comm_hash, rank};
  if (mask) *mask = activation;
  g_pid.store(getpid(), std::memory_order_relaxed);
  if (recording()) {
    ReentrancyGuard guard;
    emit_comm(comm_hash, name, nnodes, nranks, rank);
  }
  return kSuccess;
}

// What a collective row takes from either descriptor (coll or ceColl).
struct CollFields {
  uint64_t seq;
  const char *func, *algo, *proto, *dtype;
  size_t count;
  int root;
  uint8_t nchannels, nwarps;
};

// The pool's ticket is the collective's key: unique in the process, so its
// children find it in the rows whatever NCCL's seqNumber says.
// Only a collective takes the thread's state: its thread id may attach the
// thread, which can start the runtime, so it runs under a ReentrancyGuard.
// Proxy ops and steps touch no thread-local state at their start (in a
// dlopen()ed library each access is a call into the dynamic linker).
void* open_coll(const PluginComm& comm, const CollFields& f) {
  ThreadState& t = this_thread();
  ReentrancyGuard guard(t);
  uint64_t ticket = 0;
  CollSlot* s = take(g_colls, "collective", &ticket);
  if (!s) return nullptr;
  s->t_start = clock::ticks();
  s->id.comm_hash.store(comm.comm_hash, std::memory_order_relaxed);
  s->id.seq.store(int64_t(f.seq), std::memory_order_relaxed);
  s->id.coll_key.store(int64_t(ticket), std::memory_order_relaxed);
  s->comm_rank = comm.rank;
  s->func = intern_nccl_name(f.func);
  s->algo = intern_nccl_name(f.algo);
  s->proto = intern_nccl_name(f.proto);
  s->dtype = intern_nccl_name(f.dtype);
  s->count = f.count;
  s->root = f.root;
  s->nchannels = f.nchannels;
  s->nwarps = f.nwarps;
  s->tid = thread_id(t);
  return s;
}

void* start_coll(const PluginComm& comm, const CollDescrV4& d) {
  return open_coll(comm, {d.seqNumber, d.func, d.algo, d.proto, d.datatype, d.count, d.root,
                          d.nChannels, d.nWarps});
}

// A copy-engine collective is a collective row like a kernel's, so the join
// and the report treat both alike: its algorithm is "CE" (no NCCL algorithm
// name is), its protocol NCCL's synchronisation strategy ("MC" or "UC"), no
// channels. Its seq is NCCL's copy-engine sequence; the join places it among
// the communicator's calls by start order (nccl_join.h).
void* start_ce_coll(const PluginComm& comm, const CeCollDescr& d) {
  return open_coll(comm, {d.seqNumber, d.func, kNcclCopyEngineAlgo, d.syncStrategy, d.datatype,
                          d.count, d.root, 0, 0});
}

// A child event takes its parent's lineage; without a parent of ours (a p2p,
// another process's collective) it knows only its communicator.
void inherit(Lineage& id, const Lineage* parent, const PluginComm& comm) {
  if (parent) return id.copy_from(*parent);
  id.comm_hash.store(comm.comm_hash, std::memory_order_relaxed);
  id.seq.store(-1, std::memory_order_relaxed);
  id.coll_key.store(0, std::memory_order_relaxed);
}

void* start_op(const PluginComm& comm, void* parent, const ProxyOpDescr& d) {
  OpSlot* s = take(g_ops, "proxy op");
  if (!s) return nullptr;
  s->t_start = clock::ticks();
  CollSlot* coll = d.pid == g_pid.load(std::memory_order_relaxed) ? g_colls.find(parent) : nullptr;
  inherit(s->id, coll ? &coll->id : nullptr, comm);
  s->id.channel.store(d.channelId, std::memory_order_relaxed);
  s->id.peer.store(d.peer, std::memory_order_relaxed);
  s->id.is_send.store(d.isSend != 0, std::memory_order_relaxed);
  s->t_progress.store(0, std::memory_order_relaxed);
  s->nsteps = d.nSteps;
  s->chunk = d.chunkSize;
  return s;
}

void* start_step(const PluginComm& comm, void* parent, const ProxyStepDescr& d) {
  StepSlot* s = take(g_steps, "proxy step");
  if (!s) return nullptr;
  s->t_start = clock::ticks();
  OpSlot* op = g_ops.find(parent);
  inherit(s->id, op ? &op->id : nullptr, comm);
  s->step = d.step;
  for (auto& t : s->t_state) t.store(0, std::memory_order_relaxed);
  s->bytes.store(0, std::memory_order_relaxed);
  return s;
}

// A synchronisation or copy batch, with its ceColl as parent.
void* start_ce_op(const PluginComm& comm, void* parent, uint64_t type, const EventDescrV6& d) {
  CeOpSlot* s = take(g_ce_ops, "copy-engine step");
  if (!s) return nullptr;
  s->t_start = clock::ticks();
  CollSlot* coll = g_colls.find(parent);
  inherit(s->id, coll ? &coll->id : nullptr, comm);
  s->kind = type == kCeSync ? kCeSyncOp : kCeBatchOp;
  s->nranks = type == kCeSync ? d.ceCollSync.nRanks : 0;
  s->is_complete = type == kCeSync && d.ceCollSync.isComplete;
  s->num_ops = type == kCeBatch ? d.ceCollBatch.numOps : 0;
  s->bytes = type == kCeBatch ? d.ceCollBatch.totalBytes : 0;
  s->intra_sync = type == kCeBatch && d.ceCollBatch.useIntraSync;
  return s;
}

// NCCL's proxy starts a kernel channel when it sees the kernel begin that
// channel's work, with the collective as parent.
void* start_kernel_ch(const PluginComm& comm, void* parent, const KernelChDescr& d) {
  KernelChSlot* s = take(g_kernel_chs, "kernel channel");
  if (!s) return nullptr;
  s->t_start = clock::ticks();
  CollSlot* coll = g_colls.find(parent);
  inherit(s->id, coll ? &coll->id : nullptr, comm);
  s->id.channel.store(d.channelId, std::memory_order_relaxed);
  s->gpu_start = d.pTimer;
  s->gpu_stop.store(0, std::memory_order_relaxed);
  return s;
}

Result stop_event(void* handle) {
  if (!handle) return kSuccess;
  uint64_t now = clock::ticks();
  bool record = recording();
  ThreadState& t = this_thread();  // once: a dlopen()ed library's TLS is a call
  ReentrancyGuard guard(t);
  if (CollSlot* s = g_colls.find(handle)) {
    if (record) emit_coll(t, *s, now);
    g_colls.release(s);
  } else if (OpSlot* s = g_ops.find(handle)) {
    if (record) emit_op(t, *s, now);
    g_ops.release(s);
  } else if (StepSlot* s = g_steps.find(handle)) {
    if (record) emit_step(t, *s, now);
    g_steps.release(s);
  } else if (KernelChSlot* s = g_kernel_chs.find(handle)) {
    if (record) emit_kernel_ch(t, *s, now);
    g_kernel_chs.release(s);
  } else if (CeOpSlot* s = g_ce_ops.find(handle)) {
    if (record) emit_ce_op(t, *s, now);
    g_ce_ops.release(s);
  }
  return kSuccess;
}

int step_state_index(EventState state) {
  switch (state) {
    case kStepSendGpuWait:
    case kStepRecvGpuWait:
      return kGpuWait;
    case kStepSendPeerWait:
      return kPeerWait;
    case kStepSendWait:
    case kStepRecvWait:
      return kNetWait;
    case kStepRecvFlushWait:
      return kFlushWait;
    default:
      return -1;
  }
}

Result record_state(void* handle, EventState state, EventStateArgs* args) {
  if (!handle) return kSuccess;
  uint64_t t = clock::ticks();
  if (StepSlot* s = g_steps.find(handle)) {
    int i = step_state_index(state);
    if (i >= 0) s->t_state[i].store(t, std::memory_order_relaxed);
    if (i >= 0 && args) s->bytes.store(args->proxyStep.transSize, std::memory_order_relaxed);
  } else if (OpSlot* s = g_ops.find(handle)) {
    if (state == kOpInProgress) s->t_progress.store(t, std::memory_order_relaxed);
  } else if (KernelChSlot* s = g_kernel_chs.find(handle)) {
    if (state == kKernelChStop && args)
      s->gpu_stop.store(args->kernelCh.pTimer, std::memory_order_relaxed);
  }
  return kSuccess;
}

Result finalize(void* context) {
  delete static_cast<PluginComm*>(context);
  return kSuccess;
}

// v6's copy-engine events; older descriptors have none.
template <typename Descr>
void* start_ce_event(const PluginComm& comm, const Descr& d) {
  if constexpr (std::is_same_v<Descr, EventDescrV6>) {
    if (d.type == kCeColl) return start_ce_coll(comm, d.ceColl);
    if (d.type == kCeSync || d.type == kCeBatch) return start_ce_op(comm, d.parentObj, d.type, d);
  }
  return nullptr;
}

// v6, v5 and v4 differ in the descriptor's union and type width, and v4 in
// init's argument order.
template <typename Descr>
Result start_event(void* context, void** handle, Descr* d) {
  *handle = nullptr;
  if (!context || !d || !recording()) return kSuccess;
  const auto& comm = *static_cast<PluginComm*>(context);
  switch (uint64_t(d->type)) {
    case kColl:
      *handle = start_coll(comm, d->coll);
      break;
    case kProxyOp:
      *handle = start_op(comm, d->parentObj, d->proxyOp);
      break;
    case kProxyStep:
      *handle = start_step(comm, d->parentObj, d->proxyStep);
      break;
    case kKernelCh:
      *handle = start_kernel_ch(comm, d->parentObj, d->kernelCh);
      break;
    default:
      *handle = start_ce_event(comm, *d);  // or a type we did not ask for
      break;
  }
  return kSuccess;
}

Result init_v6(void** context, uint64_t comm_id, int* mask, const char* name, int nnodes,
               int nranks, int rank, DebugLogger) {
  return init(context, comm_id, mask, name, nnodes, nranks, rank, kActivationMaskV6);
}

Result init_v5(void** context, uint64_t comm_id, int* mask, const char* name, int nnodes,
               int nranks, int rank, DebugLogger) {
  return init(context, comm_id, mask, name, nnodes, nranks, rank, kActivationMask);
}

Result init_v4(void** context, int* mask, const char* name, uint64_t comm_hash, int nnodes,
               int nranks, int rank, DebugLogger) {
  return init(context, comm_hash, mask, name, nnodes, nranks, rank, kActivationMask);
}

}  // namespace
}  // namespace ddpscope::inject::nccl_profiler

namespace np = ddpscope::inject::nccl_profiler;

// The symbols NCCL looks up (exported by injector/exports.map's nccl*).
extern "C" __attribute__((visibility("default"))) const np::ProfilerV6 ncclProfiler_v6 = {
    "ddpscope",     np::init_v6,      np::start_event<np::EventDescrV6>,
    np::stop_event, np::record_state, np::finalize};

extern "C" __attribute__((visibility("default"))) const np::ProfilerV5 ncclProfiler_v5 = {
    "ddpscope",     np::init_v5,      np::start_event<np::EventDescrV5>,
    np::stop_event, np::record_state, np::finalize};

extern "C" __attribute__((visibility("default"))) const np::ProfilerV4 ncclProfiler_v4 = {
    "ddpscope",     np::init_v4,      np::start_event<np::EventDescrV4>,
    np::stop_event, np::record_state, np::finalize};
