#include "injector/runtime/name_table.h"

#include <atomic>
#include <cstring>
#include <mutex>

namespace ddpscope::inject {

namespace {

// Open addressing over kCapacity slots. A slot is published by its hash (a
// release store after the string and id are in place), so readers that see
// the hash see a complete slot. Names are never removed.
struct Slot {
  std::atomic<uint64_t> hash{0};
  const char* str = nullptr;
  uint32_t length = 0;
  uint32_t id = 0;
};

Slot* g_slots = nullptr;
std::atomic<const char*>* g_by_id = nullptr;
std::atomic<uint32_t> g_next_id{1};
std::mutex g_insert;

uint64_t fnv1a(std::string_view s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h | 1;  // 0 marks an empty slot
}

bool same(const Slot& slot, std::string_view s) {
  return slot.length == s.size() && std::memcmp(slot.str, s.data(), s.size()) == 0;
}

}  // namespace

uint32_t NameTable::intern(const char* s) { return intern(std::string_view(s ? s : "")); }

uint32_t NameTable::intern(std::string_view s) {
  if (s.empty()) return 0;
  if (s.size() > kMaxLength) s = s.substr(0, kMaxLength);
  uint64_t h = fnv1a(s);
  for (uint32_t i = 0; i < kCapacity; ++i) {
    Slot& slot = g_slots[(h + i) & (kCapacity - 1)];
    uint64_t seen = slot.hash.load(std::memory_order_acquire);
    if (seen == 0) return insert(s, h);
    if (seen == h && same(slot, s)) return slot.id;
  }
  return kOverflow;
}

uint32_t NameTable::insert(std::string_view s, uint64_t h) {
  std::lock_guard<std::mutex> lock(g_insert);
  uint32_t i = 0;
  for (; i < kCapacity; ++i) {  // again under the lock: another thread may have won
    Slot& slot = g_slots[(h + i) & (kCapacity - 1)];
    uint64_t seen = slot.hash.load(std::memory_order_relaxed);
    if (seen == 0) break;
    if (seen == h && same(slot, s)) return slot.id;
  }
  uint32_t id = g_next_id.load(std::memory_order_relaxed);
  if (i == kCapacity || id >= kOverflow) return kOverflow;
  char* copy = new char[s.size() + 1];
  std::memcpy(copy, s.data(), s.size());
  copy[s.size()] = '\0';
  Slot& slot = g_slots[(h + i) & (kCapacity - 1)];
  slot.str = copy;
  slot.length = uint32_t(s.size());
  slot.id = id;
  g_by_id[id].store(copy, std::memory_order_release);
  g_next_id.store(id + 1, std::memory_order_relaxed);
  slot.hash.store(h, std::memory_order_release);
  return id;
}

std::string_view NameTable::name(uint32_t id) const {
  if (id == kOverflow) return "(too many distinct names)";
  if (id == 0 || id >= kCapacity) return "";
  const char* s = g_by_id[id].load(std::memory_order_acquire);
  return s ? s : "";
}

NameTable& name_table() {
  // Leaked on purpose: hooks may run during exit, after static destructors.
  static NameTable* table = [] {
    g_slots = new Slot[NameTable::kCapacity];
    g_by_id = new std::atomic<const char*>[NameTable::kCapacity]();
    return new NameTable;
  }();
  return *table;
}

}  // namespace ddpscope::inject
