// Hooks for communicator creation and teardown. They record what a collective
// event only refers to: each communicator's id, size, this rank's place in it,
// its device, and when it was created and ended.
#include <unistd.h>

#include <atomic>

#include "injector/nccl/nccl_api.h"
#include "injector/nccl/nccl_comm_info.h"
#include "injector/nccl/nccl_source.h"
#include "injector/runtime/capture.h"
#include "injector/runtime/device_tracer.h"
#include "profiler/core/clock.h"

namespace ddpscope::inject::nccl {
namespace {

void emit_comm_init(const CommInfo& c) {
  if (g_state.load(std::memory_order_relaxed) > int(State::running)) return;
  auto* e = reserve_event_body<CommInitEvent>(source(), uint8_t(CommEventKind::comm_init),
                                              EventClass::comm);
  if (!e) return;
  *e = CommInitEvent{c.created_ticks, c.comm_id, c.parent_comm_id, c.nranks,
                     c.comm_rank,     c.device,  Backend::nccl,    c.origin};
  publish_event();
}

void emit_comm_end(ncclComm_t comm, CommEnd how) {
  if (!capturing() || !comm) return;
  CommInfo* c = comm_registry().find(comm);
  if (!c) return;
  auto* e = reserve_event_body<CommEndEvent>(source(), uint8_t(CommEventKind::comm_end),
                                             EventClass::comm);
  if (!e) return;
  *e = CommEndEvent{clock::ticks(), c->comm_id, c->comm_rank, how};
  publish_event();
}

int query(ncclResult_t (*fn)(const ncclComm_t, int*), ncclComm_t comm, int fallback) {
  int v = fallback;
  if (fn && fn(comm, &v) != ncclSuccess) v = fallback;
  return v;
}

uint64_t unique_id_hash(const ncclUniqueId& id) {
  return as_comm_id(fnv1a(id.internal, sizeof id.internal));
}

// What the hooks were not told, asked of NCCL (only once it is ready: NCCL
// answers questions about a communicator in progress with an error, and
// sets the job's ncclGetLastError text).
void ask_nccl(ncclComm_t comm, CommInfo& c) {
  if (c.nranks <= 0) c.nranks = query(DDPSCOPE_REAL_NCCL(CommCount), comm, 0);
  if (c.comm_rank < 0) c.comm_rank = query(DDPSCOPE_REAL_NCCL(CommUserRank), comm, -1);
  if (c.device < 0) c.device = query(DDPSCOPE_REAL_NCCL(CommCuDevice), comm, -1);
}

bool in_progress(ncclComm_t comm) {
  auto fn = DDPSCOPE_REAL_NCCL(CommGetAsyncError);
  ncclResult_t state = ncclSuccess;
  return fn && fn(comm, &state) == ncclSuccess && state == ncclInProgress;
}

}  // namespace

CommInfo* register_comm(ncclComm_t comm, uint64_t comm_id, CommOrigin origin,
                        uint64_t parent_comm_id, int rank, int nranks, int device, bool pending) {
  ReentrancyGuard guard;  // the queries below go through NCCL's own API
  start_device_tracer();  // the first communicator is the first NCCL use
  uint64_t created = clock::ticks();
  if (comm_id == 0)  // unknown origin: unique to this process only
    comm_id = as_comm_id(fnv1a(&comm, sizeof comm, fnv1a(&origin, 1) ^ uint64_t(getpid())));
  CommInfo* c = comm_registry().put(comm, comm_id, nranks, rank, device, Backend::nccl);
  if (!c) return nullptr;
  c->created_ticks = created;
  c->origin = origin;
  c->parent_comm_id = parent_comm_id;
  if (pending) {
    c->state.store(CommInfo::kPending, std::memory_order_release);
    return c;
  }
  ask_nccl(comm, *c);
  emit_comm_init(*c);
  return c;
}

CommInfo* register_first_use(ncclComm_t comm) {
  ReentrancyGuard guard;
  return register_comm(comm, 0, CommOrigin::first_use, 0, -1, 0, -1, in_progress(comm));
}

void resolve_pending(ncclComm_t comm, CommInfo* c, bool known_ready) {
  uint8_t expected = CommInfo::kPending;
  if (!c->state.compare_exchange_strong(expected, CommInfo::kResolving)) return;
  ReentrancyGuard guard;
  if (!known_ready && in_progress(comm)) {
    c->state.store(CommInfo::kPending, std::memory_order_release);
    return;
  }
  ask_nccl(comm, *c);
  emit_comm_init(*c);
  c->state.store(CommInfo::kReady, std::memory_order_release);
}

}  // namespace ddpscope::inject::nccl

using namespace ddpscope;
using namespace ddpscope::inject;
using namespace ddpscope::inject::nccl;

namespace {

bool created(ncclResult_t rc, ncclComm_t comm) {
  return comm && (rc == ncclSuccess || rc == ncclInProgress);
}

// Every rank makes the same splits of a parent in the same order, so (parent,
// colour, how many splits before) names the child alike on every member.
uint64_t split_id(CommInfo* parent, int color) {
  uint64_t parts[3] = {parent ? parent->comm_id : 0, uint64_t(int64_t(color)),
                       parent ? parent->splits.fetch_add(1) : 0};
  return as_comm_id(fnv1a(parts, sizeof parts));
}

std::atomic<uint64_t> g_init_all_calls{0};

// Destroy and abort free the handle, which NCCL may hand out again for a new
// communicator, even on another thread as soon as the call returns: so the
// registry forgets it before the call, and takes it back if NCCL refused.
template <typename Fn>
ncclResult_t end_of(ncclComm_t comm, Fn&& real_call) {
  CommInfo* c = comm ? comm_registry().find(comm) : nullptr;
  if (!c) return real_call();
  CommInfo kept;
  kept.comm_id = c->comm_id;
  kept.nranks = c->nranks;
  kept.comm_rank = c->comm_rank;
  kept.device = c->device;
  kept.backend = c->backend;
  uint64_t seq = c->next_seq.load(std::memory_order_relaxed);
  uint32_t splits = c->splits.load(std::memory_order_relaxed);
  comm_registry().forget(comm);
  ncclResult_t rc = real_call();
  if (rc != ncclSuccess && rc != ncclInProgress)
    if (CommInfo* back = comm_registry().put(comm, kept.comm_id, kept.nranks, kept.comm_rank,
                                             kept.device, kept.backend)) {
      back->next_seq.store(seq, std::memory_order_relaxed);
      back->splits.store(splits, std::memory_order_relaxed);
    }
  return rc;
}

}  // namespace

extern "C" {

ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank) {
  auto real = DDPSCOPE_REAL_NCCL(CommInitRank);
  if (!real) return ncclSystemError;
  ncclResult_t rc = real(comm, nranks, id, rank);
  if (capturing() && comm && created(rc, *comm))
    register_comm(*comm, unique_id_hash(id), CommOrigin::init_rank, 0, rank, nranks);
  return rc;
}

// With config.blocking = 0, NCCL returns ncclInProgress: the communicator is
// registered pending until NCCL says it is ready (ncclCommGetAsyncError below).
ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank,
                                    ncclConfig_t* config) {
  auto real = DDPSCOPE_REAL_NCCL(CommInitRankConfig);
  if (!real) return ncclSystemError;
  ncclResult_t rc = real(comm, nranks, id, rank, config);
  if (capturing() && comm && created(rc, *comm))
    register_comm(*comm, unique_id_hash(id), CommOrigin::init_rank_config, 0, rank, nranks, -1,
                  rc == ncclInProgress);
  return rc;
}

ncclResult_t ncclCommInitAll(ncclComm_t* comms, int ndev, const int* devlist) {
  auto real = DDPSCOPE_REAL_NCCL(CommInitAll);
  if (!real) return ncclSystemError;
  ncclResult_t rc = real(comms, ndev, devlist);
  if (!capturing() || rc != ncclSuccess || !comms) return rc;
  // One process holds every rank: the id only has to be unique within it.
  uint64_t parts[3] = {uint64_t(getpid()), g_init_all_calls.fetch_add(1), uint64_t(ndev)};
  uint64_t id = as_comm_id(fnv1a(parts, sizeof parts));
  for (int i = 0; i < ndev; ++i)
    if (comms[i])
      register_comm(comms[i], id, CommOrigin::init_all, 0, i, ndev, devlist ? devlist[i] : i);
  return rc;
}

ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm,
                           ncclConfig_t* config) {
  auto real = DDPSCOPE_REAL_NCCL(CommSplit);
  if (!real) return ncclSystemError;
  ncclResult_t rc = real(comm, color, key, newcomm, config);
  if (!capturing()) return rc;
  CommInfo* parent = comm_info(comm);
  uint64_t id = split_id(parent, color);  // counted even for NOCOLOR, as on every rank
  if (newcomm && created(rc, *newcomm))
    register_comm(*newcomm, id, CommOrigin::split, parent ? parent->comm_id : 0, -1, 0, -1,
                  rc == ncclInProgress);
  return rc;
}

// How a job learns that a non-blocking communicator is ready: that is when a
// pending one (above) is asked for its size, rank and device.
ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* async_error) {
  auto real = DDPSCOPE_REAL_NCCL(CommGetAsyncError);
  if (!real) return ncclSystemError;
  ncclResult_t rc = real(comm, async_error);
  if (rc != ncclSuccess || !async_error || *async_error != ncclSuccess || !comm ||
      this_thread().depth != 0)
    return rc;
  CommInfo* c = comm_registry().find(comm);
  if (c && c->state.load(std::memory_order_acquire) == CommInfo::kPending)
    resolve_pending(comm, c, true);
  return rc;
}

ncclResult_t ncclCommFinalize(ncclComm_t comm) {
  auto real = DDPSCOPE_REAL_NCCL(CommFinalize);
  if (!real) return ncclSystemError;
  emit_comm_end(comm, CommEnd::finalize);
  return real(comm);
}

ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  auto real = DDPSCOPE_REAL_NCCL(CommDestroy);
  if (!real) return ncclSystemError;
  emit_comm_end(comm, CommEnd::destroy);
  return end_of(comm, [&] { return real(comm); });
}

ncclResult_t ncclCommAbort(ncclComm_t comm) {
  auto real = DDPSCOPE_REAL_NCCL(CommAbort);
  if (!real) return ncclSystemError;
  emit_comm_end(comm, CommEnd::abort);
  return end_of(comm, [&] { return real(comm); });
}

}  // extern "C"
