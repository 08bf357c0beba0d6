#include "injector/runtime/comm_registry.h"

#include <mutex>

namespace ddpscope::inject {

CommInfo* CommRegistry::put(const void* handle, uint64_t comm_id, int nranks, int comm_rank,
                            int device, Backend backend) {
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  uintptr_t key = reinterpret_cast<uintptr_t>(handle);
  CommInfo* slot = find(handle);
  if (!slot) {
    for (size_t i = 0, s = hash(key); i < kSlots; ++i, s = (s + 1) & (kSlots - 1)) {
      if (slots_[s].handle.load(std::memory_order_relaxed) == 0) {
        slot = &slots_[s];
        break;
      }
    }
  }
  if (!slot) return nullptr;
  slot->comm_id = comm_id;
  slot->nranks = nranks;
  slot->comm_rank = comm_rank;
  slot->device = device;
  slot->backend = backend;
  slot->next_seq.store(0, std::memory_order_relaxed);
  slot->splits.store(0, std::memory_order_relaxed);
  slot->handle.store(key, std::memory_order_release);  // publishes the fields above
  CommInfo* expected = nullptr;
  first_.compare_exchange_strong(expected, slot);
  return slot;
}

bool CommRegistry::first_comm(int* rank, int* size, int* device, Backend* backend) const {
  CommInfo* c = first_.load(std::memory_order_acquire);
  if (!c) return false;
  *rank = c->comm_rank;
  *size = c->nranks;
  *device = c->device;
  *backend = c->backend;
  return true;
}

CommRegistry& comm_registry() {
  static CommRegistry* r = new CommRegistry;  // never destroyed: hooks may run during exit
  return *r;
}

uint64_t fnv1a(const void* data, size_t n, uint64_t h) {
  auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

}  // namespace ddpscope::inject
