#include "injector/runtime/name_table.h"

#include <cstring>

#include "injector/runtime/counters.h"
#include "injector/runtime/log.h"

namespace ddpscope::inject {

// Open addressing over kCapacity slots, linear probing bounded by kMaxProbes.
// A slot is published by its hash (a release store after the string and id
// are in place), so readers that see the hash see a complete slot. Names are
// never removed.
struct NameTable::Slot {
  std::atomic<uint64_t> hash{0};
  const char* str = nullptr;
  uint32_t length = 0;
  uint32_t id = 0;
};

namespace {

uint64_t fnv1a(std::string_view s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h | 1;  // 0 marks an empty slot
}

std::string_view cut(std::string_view s) {
  return s.size() > NameTable::kMaxLength ? s.substr(0, NameTable::kMaxLength) : s;
}

}  // namespace

NameTable::NameTable()
    : slots_(new Slot[kCapacity]), by_id_(new std::atomic<const char*>[kCapacity]()) {}

NameTable::~NameTable() {
  for (uint32_t i = 0; i < kCapacity; ++i) delete[] slots_[i].str;
  delete[] slots_;
  delete[] by_id_;
}

NameTable::Probe NameTable::probe(std::string_view s, uint64_t h, std::memory_order order) const {
  for (uint32_t i = 0; i < kMaxProbes; ++i) {
    Slot& slot = slots_[(h + i) & (kCapacity - 1)];
    uint64_t seen = slot.hash.load(order);
    if (seen == 0) return {&slot, false, i + 1};
    if (seen == h && slot.length == s.size() && std::memcmp(slot.str, s.data(), s.size()) == 0)
      return {&slot, true, i + 1};
  }
  return {nullptr, false, kMaxProbes};
}

uint32_t NameTable::intern(const char* s) { return intern(std::string_view(s ? s : "")); }

uint32_t NameTable::intern(std::string_view s) {
  if (s.empty()) return 0;
  s = cut(s);
  uint64_t h = fnv1a(s);
  Probe p = probe(s, h, std::memory_order_acquire);
  if (p.found) return p.slot->id;
  if (!p.slot || next_id_.load(std::memory_order_relaxed) >= kMaxNames) return overflow();
  return insert(s, h);
}

uint32_t NameTable::insert(std::string_view s, uint64_t h) {
  std::lock_guard<std::mutex> lock(insert_);
  // Again under the lock: another thread may have won.
  Probe p = probe(s, h, std::memory_order_relaxed);
  if (p.found) return p.slot->id;
  uint32_t id = next_id_.load(std::memory_order_relaxed);
  if (!p.slot || id >= kMaxNames) return overflow();
  char* copy = new char[s.size() + 1];
  std::memcpy(copy, s.data(), s.size());
  copy[s.size()] = '\0';
  p.slot->str = copy;
  p.slot->length = uint32_t(s.size());
  p.slot->id = id;
  by_id_[id].store(copy, std::memory_order_release);
  next_id_.store(id + 1, std::memory_order_relaxed);
  p.slot->hash.store(h, std::memory_order_release);
  return id;
}

[[gnu::cold]] uint32_t NameTable::overflow() {
  count(Counter::names_overflowed);
  notice_once(Notice::names_full,
              "more than %u distinct NVTX/communicator names; further new names are recorded "
              "as \"(too many distinct names)\"",
              kMaxNames - 1);
  return kOverflow;
}

uint32_t NameTable::probes_for(std::string_view s) const {
  s = cut(s);
  return s.empty() ? 0 : probe(s, fnv1a(s), std::memory_order_acquire).probes;
}

uint32_t NameTable::home_of(std::string_view s) { return fnv1a(cut(s)) & (kCapacity - 1); }

std::string_view NameTable::name(uint32_t id) const {
  if (id == kOverflow) return "(too many distinct names)";
  if (id == 0 || id >= kCapacity) return "";
  const char* s = by_id_[id].load(std::memory_order_acquire);
  return s ? s : "";
}

NameTable& name_table() {
  // Leaked on purpose: hooks may run during exit, after static destructors.
  static NameTable* table = new NameTable;
  return *table;
}

}  // namespace ddpscope::inject
