#include "tuner/emulation/link_shaping.h"

#include <algorithm>
#include <cmath>

#include "tuner/emulation/emulation_error.h"
#include "tuner/emulation/system_command.h"

namespace ddpscope::tuner::emulation {
namespace {

// A burst must hold a full GSO segment, or tbf splits every one of them.
// tbf counts the segment as the packets it becomes on the wire: up to 64 KiB
// (gso_max_size) plus the headers (66 bytes with TCP timestamps) of its 45
// other packets, 68.5 kB. A burst of 64 KiB split every full segment, and a
// link of 400-550 Mbit/s (1 ms below 68.5 kB) carried 1.4-1.7 x the wire's
// time in all-reduces at 500 Mbit/s against 1.0 at 250 and 700 (where TCP's
// segments are smaller or fit) (docs/tuner.md, "For maintainers").
constexpr uint64_t kMinBurst = 96 * 1024;
// Room for every rank's TCP flows to queue (TCP small queues lets each flow
// keep about 1 MiB in qdiscs) without drops that would look like congestion.
constexpr uint64_t kMinLimit = 4 * 1024 * 1024;

}  // namespace

TokenBucket token_bucket_for(double gbps) {
  TokenBucket b;
  b.rate_bits = uint64_t(std::llround(gbps * 1e9));
  const double bytes_per_ms = gbps * 1e9 / 8 / 1000;
  b.burst_bytes = std::max(kMinBurst, uint64_t(bytes_per_ms));
  b.limit_bytes = std::max(kMinLimit, uint64_t(bytes_per_ms * 100));
  return b;
}

std::vector<std::string> tbf_command(const std::string& tc, const std::string& netns,
                                     const std::string& dev, const TokenBucket& bucket) {
  return {tc,
          "-n",
          netns,
          "qdisc",
          "add",
          "dev",
          dev,
          "root",
          "tbf",
          "rate",
          std::to_string(bucket.rate_bits) + "bit",
          "burst",
          std::to_string(bucket.burst_bytes),
          "limit",
          std::to_string(bucket.limit_bytes)};
}

void shape_egress(const std::string& netns, const std::string& dev, double gbps) {
  const std::string tc = find_program("tc");
  if (tc.empty()) throw EmulationUnavailable("shaping links needs iproute2's `tc`, not found");
  run_command(tbf_command(tc, netns, dev, token_bucket_for(gbps)));
}

}  // namespace ddpscope::tuner::emulation
