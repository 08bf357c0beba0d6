#include "profiler/core/clock.h"

#ifdef DDPSCOPE_HAVE_TSC
#include <cpuid.h>
#endif

namespace ddpscope::clock {
namespace {

bool detect_invariant_tsc() {
#ifdef DDPSCOPE_HAVE_TSC
  unsigned a, b, c, d;
  if (__get_cpuid_max(0x80000000, nullptr) < 0x80000007) return false;
  __cpuid(0x80000007, a, b, c, d);
  return (d & (1u << 8)) != 0;  // "invariant TSC": constant rate, runs in all C-states
#else
  return false;
#endif
}

// One (ticks, ns) pair: the tick read closest around the clock read wins, so
// the pair's error is bounded by the shortest bracket seen.
void sample(uint64_t& t, int64_t& ns) {
  uint64_t best = UINT64_MAX;
  for (int i = 0; i < 7; ++i) {
    uint64_t a = ticks();
    int64_t m = monotonic_ns();
    uint64_t b = ticks();
    if (b - a < best) {
      best = b - a;
      t = a + (b - a) / 2;
      ns = m;
    }
  }
}

}  // namespace

const bool kTicksAreTsc = detect_invariant_tsc();

int64_t wall_offset_ns() {
  int64_t best = INT64_MAX, offset = 0;
  for (int i = 0; i < 7; ++i) {
    int64_t a = monotonic_ns();
    int64_t w = wall_ns();
    int64_t b = monotonic_ns();
    if (b - a < best) {
      best = b - a;
      offset = w - (a + (b - a) / 2);
    }
  }
  return offset;
}

TickConverter::TickConverter() {
  sample(first_ticks_, first_ns_);
  last_ticks_ = first_ticks_;
  last_ns_ = first_ns_;
  if (!kTicksAreTsc) return;
  // A first slope from a short busy span, refined by every later calibrate().
  int64_t until = first_ns_ + 2000000;
  while (monotonic_ns() < until) {
  }
  calibrate();
}

void TickConverter::calibrate() {
  if (!kTicksAreTsc) return;
  sample(last_ticks_, last_ns_);
  if (last_ticks_ > first_ticks_)
    slope_ = double(last_ns_ - first_ns_) / double(last_ticks_ - first_ticks_);
}

int64_t TickConverter::to_ns(uint64_t t) const {
  if (!kTicksAreTsc) return int64_t(t);
  // Anchor at the latest sample: events are converted soon after they happen.
  return last_ns_ + int64_t(double(int64_t(t - last_ticks_)) * slope_);
}

std::string iso_utc(int64_t wall_ns) {
  time_t t = time_t(wall_ns / 1000000000);
  tm u{};
  gmtime_r(&t, &u);
  char buf[32];
  strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &u);
  return buf;
}

}  // namespace ddpscope::clock
