// Clocks with skew and drift (profiler/analysis/clock_sync.h): two hosts, the
// second's clock 5 ms ahead and gaining 50 µs per second, ten minutes of
// all-reduces every 100 ms with two ranks entering late by known amounts and
// a few microseconds of jitter everywhere. The lateness the analysis
// measures must match the injected one within 0.1 ms to the very end of the
// run, where a single offset per host would be 15 ms off.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>

#include "profiler/analysis/stragglers.h"

using namespace ddpscope;
using namespace ddpscope::analysis;

namespace {

constexpr int64_t kMs = 1'000'000;
constexpr int kCollectives = 6000;                  // 10 minutes at one per 100 ms
constexpr double kLateMs[] = {0.0, 0.0, 0.3, 2.0};  // ranks 2 and 3 (host b) enter late
constexpr double kOffsetNs = 5.0 * kMs, kDrift = 50e-6;

// A fixed pseudo-random jitter in [-amp, amp] ns.
int64_t jitter(uint64_t& state, int64_t amp) {
  state = state * 6364136223846793005ull + 1442695040888963407ull;
  return int64_t(state >> 33) % (2 * amp + 1) - amp;
}

// Host b's clock reading of a true time.
int64_t on_host(int rank, int64_t t) {
  return rank < 2 ? t : t + int64_t(kOffsetNs + kDrift * double(t));
}

std::vector<Call> drifting_run() {
  std::vector<Call> calls;
  uint64_t rng = 42;
  for (int k = 0; k < kCollectives; ++k) {
    int64_t t = int64_t(k) * 100 * kMs;
    int64_t done = t + 3 * kMs;  // everyone has entered by then: it completes together
    for (int r = 0; r < 4; ++r) {
      Call c;
      c.rank = r;
      c.nranks = 4;
      c.comm_id = 1;
      c.seq = uint64_t(k);
      c.op = Op::allreduce;
      int64_t enter = t + int64_t(kLateMs[r] * kMs) + jitter(rng, 10'000);
      int64_t end = done + jitter(rng, 5'000);
      c.host_start = on_host(r, enter);
      c.start = c.host_start;
      c.end = on_host(r, end);
      calls.push_back(c);
    }
  }
  return calls;
}

}  // namespace

TEST_CASE("clocks: lateness per rank recovered within 0.1 ms after 10 minutes of drift") {
  std::map<int, std::string> host_of = {{0, "a"}, {1, "a"}, {2, "b"}, {3, "b"}};
  Lateness late = measure_lateness(drifting_run(), host_of);
  REQUIRE(late.matched == kCollectives);
  for (int r = 0; r < 4; ++r) {
    const auto& l = late.late_ms.at(r);
    INFO("rank " << r);
    double worst = 0;
    for (size_t i = l.size() - 100; i < l.size(); ++i)  // the last ten seconds
      worst = std::max(worst, std::fabs(l[i] - kLateMs[r]));
    CHECK(worst < 0.1);
    CHECK(std::fabs(l[l.size() / 2] - kLateMs[r]) < 0.1);
  }
  const HostClock& b = late.clocks.hosts.at("b");
  CHECK(late.clocks.reference == "a");
  CHECK(std::fabs((b.drift - late.clocks.hosts.at("a").drift) - kDrift) < 1e-6);
  CHECK(b.residual_ns < 20'000);  // jitter of a few µs, not the drift, is what is left
}

TEST_CASE("clocks: one host needs no correction") {
  std::map<int, std::string> host_of = {{0, "a"}, {1, "a"}, {2, "a"}, {3, "a"}};
  auto calls = drifting_run();
  for (auto& c : calls) c.host_start = c.start;  // already on one clock
  Lateness late = measure_lateness(calls, host_of);
  CHECK(late.clocks.hosts.empty());
  CHECK(late.correction_us.at(3) == 0);
}
