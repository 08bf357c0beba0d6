#include "tuner/emulation/link_shaping.h"

#include <algorithm>
#include <cmath>

#include "tuner/emulation/emulation_error.h"
#include "tuner/emulation/system_command.h"

namespace ddpscope::tuner::emulation {
namespace {

// A burst must hold a full GSO segment, or tbf splits every one of them.
constexpr uint64_t kMinBurst = 64 * 1024;
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
