#include "injector/runtime/comm_registry.h"

#include <mutex>

namespace ddpscope::inject {
namespace {
std::mutex g_registry_mu;  // inserts and removals; lookups take no lock
}  // namespace

CommInfo* CommRegistry::put(const void* handle, uint64_t comm_id, int nranks, int comm_rank,
                            int device, Backend backend) {
  std::lock_guard<std::mutex> lock(g_registry_mu);
  uintptr_t key = reinterpret_cast<uintptr_t>(handle);
  CommInfo* slot = find(handle);
  for (size_t i = 0, s = hash(key); !slot && i < kSlots; ++i, s = (s + 1) & (kSlots - 1)) {
    uintptr_t k = slots_[s].handle.load(std::memory_order_relaxed);
    if (k == 0 || k == kTombstone) slot = &slots_[s];
  }
  if (!slot) return nullptr;
  slot->comm_id = comm_id;
  slot->nranks = nranks;
  slot->comm_rank = comm_rank;
  slot->device = device;
  slot->backend = backend;
  slot->next_seq.store(0, std::memory_order_relaxed);
  slot->splits.store(0, std::memory_order_relaxed);
  slot->state.store(CommInfo::kReady, std::memory_order_relaxed);
  slot->handle.store(key, std::memory_order_release);  // publishes the fields above
  if (!first_.set.load(std::memory_order_relaxed)) {
    first_.rank = comm_rank;
    first_.size = nranks;
    first_.device = device;
    first_.backend = backend;
    first_.set.store(true, std::memory_order_release);
  }
  return slot;
}

void CommRegistry::forget(const void* handle) {
  std::lock_guard<std::mutex> lock(g_registry_mu);
  CommInfo* slot = find(handle);
  if (!slot) return;
  slot->handle.store(kTombstone, std::memory_order_release);
  clear_tombstones_before(size_t(slot - slots_));
}

// A tombstone followed by an empty slot lies on no live entry's probe path
// (every slot between an entry's home and the entry is in use), so it can
// become empty again, and so can the tombstones before it. Lookups racing
// this only ever stop earlier on paths that hold nothing further.
void CommRegistry::clear_tombstones_before(size_t s) {
  for (size_t n = 0; n < kSlots; ++n, s = (s + kSlots - 1) & (kSlots - 1)) {
    if (slots_[s].handle.load(std::memory_order_relaxed) != kTombstone) return;
    if (slots_[(s + 1) & (kSlots - 1)].handle.load(std::memory_order_relaxed) != 0) return;
    slots_[s].handle.store(0, std::memory_order_release);
  }
}

bool CommRegistry::first_comm(int* rank, int* size, int* device, Backend* backend) const {
  if (!first_.set.load(std::memory_order_acquire)) return false;
  *rank = first_.rank;
  *size = first_.size;
  *device = first_.device;
  *backend = first_.backend;
  return true;
}

size_t CommRegistry::used_slots() const {
  size_t n = 0;
  for (const auto& s : slots_) n += s.handle.load(std::memory_order_relaxed) != 0;
  return n;
}

constinit CommRegistry g_comm_registry;

uint64_t fnv1a(const void* data, size_t n, uint64_t h) {
  auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

}  // namespace ddpscope::inject
