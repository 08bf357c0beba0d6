// Reading memory that may not be mapped, without a fault: for checking that a
// structure has the layout we were compiled against before trusting it. Cold
// path only (a system call per read).
#pragma once

#include <cstddef>
#include <cstdint>

namespace ddpscope::inject {

// Copies `n` bytes at `addr` into `out`; false if any of them is unreadable.
bool safe_read(const void* addr, void* out, size_t n);

// The pointer-sized word at `addr`, or nullopt-like `ok = false`.
inline uint64_t safe_word(const void* addr, bool& ok) {
  uint64_t w = 0;
  if (!safe_read(addr, &w, sizeof w)) ok = false;
  return w;
}

}  // namespace ddpscope::inject
