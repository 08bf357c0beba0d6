// Communicators the job created, keyed by their handle (ncclComm_t, or the Gloo
// context pointer). Lookups are lock-free (the hot path does one per call);
// inserts and removals take a mutex and happen once per communicator.
// Destroyed communicators are forgotten (ncclCommDestroy/Abort), so a job
// that makes and destroys communicators in a loop never fills the table.
//
// comm_id is chosen to be equal on every rank of one communicator, so that
// collectives can be matched across ranks: a hash of the NCCL unique id, of the
// parent id and colour for a split, of the creation order for Gloo contexts.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "profiler/core/records.h"
#include "profiler/core/vocab.h"

namespace ddpscope::inject {

struct CommInfo {
  std::atomic<uintptr_t> handle{0};
  uint64_t comm_id = 0;
  int32_t nranks = 0;
  int32_t comm_rank = -1;
  int32_t device = -1;
  Backend backend = Backend::unknown;
  std::atomic<uint64_t> next_seq{0};
  std::atomic<uint32_t> splits{0};  // children made by ncclCommSplit, for their ids
  // A communicator NCCL handed back still in progress (a non-blocking split or
  // init): NCCL refuses questions about it until it is ready, so its size,
  // rank and device are asked, and its creation written, only then.
  enum : uint8_t { kReady, kPending, kResolving };
  std::atomic<uint8_t> state{kReady};
  uint64_t created_ticks = 0;
  uint64_t parent_comm_id = 0;
  CommOrigin origin = CommOrigin::first_use;
};

class CommRegistry {
 public:
  static constexpr size_t kSlots = 4096;  // power of two

  // Open addressing with linear probing; a forgotten slot becomes a tombstone
  // that lookups step over and inserts reuse.
  CommInfo* find(const void* handle) const {
    uintptr_t key = reinterpret_cast<uintptr_t>(handle);
    for (size_t i = 0, s = hash(key); i < kSlots; ++i, s = (s + 1) & (kSlots - 1)) {
      uintptr_t k = slots_[s].handle.load(std::memory_order_acquire);
      if (k == key) return &slots_[s];
      if (k == 0) return nullptr;
    }
    return nullptr;
  }

  // Registers (or re-registers, when a handle is reused) a communicator.
  // Returns null only when the table is full.
  CommInfo* put(const void* handle, uint64_t comm_id, int nranks, int comm_rank, int device,
                Backend backend);

  // Forgets a communicator the job is destroying (its handle may be reused).
  // What the rank file needs of it was written as events already; the first
  // communicator's identity (first_comm) is kept.
  void forget(const void* handle);

  // The first communicator ever registered: where the rank comes from when no
  // launcher variable names it.
  bool first_comm(int* rank, int* size, int* device, Backend* backend) const;

  // Slots holding a communicator or a tombstone (tests: forgetting cleans up).
  size_t used_slots() const;

 private:
  static constexpr uintptr_t kTombstone = 1;  // never a handle: handles are aligned
  static size_t hash(uintptr_t k) { return (k * 0x9E3779B97F4A7C15ull >> 40) & (kSlots - 1); }
  void clear_tombstones_before(size_t s);
  mutable CommInfo slots_[kSlots];
  struct First {
    std::atomic<bool> set{false};
    int rank = -1, size = 0, device = -1;
    Backend backend = Backend::unknown;
  } first_;
};

// The process's registry: constant-initialised (no constructor to run, usable
// from any hook however early) and never destroyed.
extern CommRegistry g_comm_registry;
inline CommRegistry& comm_registry() { return g_comm_registry; }

// FNV-1a, for ids that every rank computes alike.
uint64_t fnv1a(const void* data, size_t n, uint64_t seed = 0xcbf29ce484222325ull);

}  // namespace ddpscope::inject
