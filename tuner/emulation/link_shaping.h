// Shaping one direction of an emulated link to a bandwidth: a token bucket
// filter (`tc qdisc ... tbf`) as the root qdisc of the sending interface. A
// node's link is shaped on both ends, so each direction gets the full rate, as
// a full-duplex NIC into a switch does.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ddpscope::tuner::emulation {

struct TokenBucket {
  uint64_t rate_bits = 0;    // per second
  uint64_t burst_bytes = 0;  // sent at line rate before the rate applies
  uint64_t limit_bytes = 0;  // queued before packets drop
};

// The bucket for a link of `gbps`: a burst of about 1 ms at that rate (short,
// so that a bucket of a few hundred KB already sees the rate, not the burst),
// a queue of 100 ms (deep enough that TCP sees no drops from a few flows).
TokenBucket token_bucket_for(double gbps);

// `tc -n NS qdisc add dev DEV root tbf rate ...bit burst ... limit ...`.
std::vector<std::string> tbf_command(const std::string& tc, const std::string& netns,
                                     const std::string& dev, const TokenBucket& bucket);

// Runs tbf_command for `dev` in `netns`.
void shape_egress(const std::string& netns, const std::string& dev, double gbps);

}  // namespace ddpscope::tuner::emulation
