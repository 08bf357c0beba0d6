// Time for ddpscope. The hot path reads raw ticks (the invariant TSC where the
// CPU has one: ~12 ns against ~24 ns for clock_gettime here); the writer thread
// converts ticks to CLOCK_MONOTONIC nanoseconds with a linear fit it refreshes at
// every flush, and stores the offset from monotonic to wall time once per file.
#pragma once

#include <cstdint>
#include <ctime>
#include <string>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define DDPSCOPE_HAVE_TSC 1
#endif

namespace ddpscope::clock {

inline int64_t monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// UTC "YYYY-MM-DDTHH:MM:SSZ" of a wall-clock time (meta start_time, tune runs).
std::string iso_utc(int64_t wall_ns);

inline int64_t wall_ns() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// True when ticks() reads the TSC; decided once at load time from CPUID.
extern const bool kTicksAreTsc;

inline uint64_t ticks() {
#ifdef DDPSCOPE_HAVE_TSC
  if (kTicksAreTsc) return __rdtsc();
#endif
  return uint64_t(monotonic_ns());
}

// Wall-clock ns minus monotonic ns, measured as tightly as the two reads allow.
int64_t wall_offset_ns();

// Maps ticks to monotonic nanoseconds. Not thread-safe: owned by the writer.
class TickConverter {
 public:
  TickConverter();
  // Takes a fresh (ticks, ns) anchor; the slope is fitted over the whole span
  // since construction, so it sharpens as the run goes on.
  void calibrate();
  int64_t to_ns(uint64_t t) const;
  double ns_per_tick() const { return slope_; }

 private:
  uint64_t first_ticks_ = 0, last_ticks_ = 0;
  int64_t first_ns_ = 0, last_ns_ = 0;
  double slope_ = 1.0;
};

}  // namespace ddpscope::clock
