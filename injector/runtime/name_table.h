// Interned strings for hot-path events (NVTX domain and range names): a hook
// hands in a C string and gets a small id; the writer thread turns ids back
// into strings. A name seen before costs a hash and a probe — no lock, no
// allocation; the first sight of a name takes a mutex and copies it once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace ddpscope::inject {

class NameTable {
 public:
  static constexpr uint32_t kCapacity = 1u << 16;  // distinct names per process
  static constexpr size_t kMaxLength = 255;        // longer names are cut

  // Id 0 is the empty name (also for null); kOverflow when the table is full.
  static constexpr uint32_t kOverflow = kCapacity - 1;
  uint32_t intern(const char* s);
  uint32_t intern(std::string_view s);
  // Any thread; valid for the life of the process.
  std::string_view name(uint32_t id) const;

 private:
  uint32_t insert(std::string_view s, uint64_t hash);
};

NameTable& name_table();

}  // namespace ddpscope::inject
