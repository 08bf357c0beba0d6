// From an ncclComm_t to what the hooks record about it (id, size, rank).
#pragma once

#include "injector/nccl/nccl_abi.h"
#include "injector/runtime/comm_registry.h"
#include "profiler/core/records.h"

namespace ddpscope::inject::nccl {

// Registers a communicator the job just created, asking the real NCCL for
// what it was not told (size, rank, device), and emits its comm_init event.
// One NCCL handed back in progress (`pending`) is asked, and written, only
// once it is ready: resolve_pending.
CommInfo* register_comm(ncclComm_t comm, uint64_t comm_id, CommOrigin origin,
                        uint64_t parent_comm_id, int known_rank = -1, int known_nranks = 0,
                        int known_device = -1, bool pending = false);

// A communicator created behind our back (e.g. ncclCommInitRankScalable), at
// its first use: pending if NCCL says it is still in progress.
CommInfo* register_first_use(ncclComm_t comm);

// Completes a pending registration: at once when `known_ready` (NCCL just
// said so), else if NCCL says it is ready now. Several threads may race here.
void resolve_pending(ncclComm_t comm, CommInfo* c, bool known_ready);

// The registered communicator (completed if it was pending and is ready), or
// a new registration. Null for a null handle.
inline CommInfo* comm_info(ncclComm_t comm) {
  if (!comm) return nullptr;
  if (CommInfo* c = comm_registry().find(comm)) {
    if (__builtin_expect(c->state.load(std::memory_order_acquire) == CommInfo::kPending, 0))
      resolve_pending(comm, c, false);
    return c;
  }
  return register_first_use(comm);
}

// The next call number on `comm`. NCCL forbids concurrent calls on one
// communicator, so the counter needs no atomic read-modify-write (no lock
// prefix on the hot path).
inline uint64_t next_seq(CommInfo& comm) {
  uint64_t s = comm.next_seq.load(std::memory_order_relaxed);
  comm.next_seq.store(s + 1, std::memory_order_relaxed);
  return s;
}

// Ids are kept positive so that SQL and JSON show them as they are.
inline uint64_t as_comm_id(uint64_t h) { return h & 0x7fffffffffffffffull; }

}  // namespace ddpscope::inject::nccl
