// Interned strings for hot-path events (NVTX domain and range names): a hook
// hands in a C string and gets a small id; the writer thread turns ids back
// into strings. A name seen before costs a hash and a short probe — no lock,
// no allocation; the first sight of a name takes a mutex and copies it once.
//
// Bounded: at most kMaxNames names, each within kMaxProbes slots of where its
// hash points, so a job that makes a new name per call (a step number in the
// range's message) costs at most kMaxProbes slot reads per call once the table
// is full, and never a lock: its names are recorded as the overflow marker and
// counted (meta count:names_overflowed).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string_view>

namespace ddpscope::inject {

class NameTable {
 public:
  static constexpr uint32_t kCapacity = 1u << 16;       // slots, and the id space
  static constexpr uint32_t kMaxNames = kCapacity / 2;  // distinct names: load <= 1/2
  static constexpr uint32_t kMaxProbes = 64;            // slots a lookup may read
  static constexpr size_t kMaxLength = 255;             // longer names are cut

  // Id 0 is the empty name (also for null); kOverflow when the table is full.
  static constexpr uint32_t kOverflow = kCapacity - 1;

  NameTable();
  ~NameTable();  // the process's table is never destroyed (hooks run during exit)
  NameTable(const NameTable&) = delete;
  NameTable& operator=(const NameTable&) = delete;

  uint32_t intern(const char* s);
  uint32_t intern(std::string_view s);
  // Any thread; valid for the life of the table.
  std::string_view name(uint32_t id) const;
  // How many slots intern(s) reads before it finds s, a free slot or gives up:
  // at most kMaxProbes (tests hold the table to it).
  uint32_t probes_for(std::string_view s) const;
  // The slot where probing for s starts (tests build clusters with it).
  static uint32_t home_of(std::string_view s);

 private:
  struct Slot;
  struct Probe {
    Slot* slot;       // s's slot, or the free slot for it, or null
    bool found;       // slot holds s
    uint32_t probes;  // slots read
  };
  Probe probe(std::string_view s, uint64_t hash, std::memory_order order) const;
  uint32_t insert(std::string_view s, uint64_t hash);
  uint32_t overflow();

  Slot* slots_;
  std::atomic<const char*>* by_id_;
  std::atomic<uint32_t> next_id_{1};
  std::mutex insert_;
};

// The process's table.
NameTable& name_table();

}  // namespace ddpscope::inject
