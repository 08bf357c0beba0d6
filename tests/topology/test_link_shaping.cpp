// The token bucket for a link, computed by hand: rate in bit/s, a burst of
// 1 ms of traffic (at least 96 KiB: a full GSO segment with its headers), a queue of 100 ms (at
// least 4 MiB); and where the emulation finds `ip` and `tc`.
#include <catch2/catch.hpp>

#include "tuner/emulation/link_shaping.h"
#include "tuner/emulation/system_command.h"

using namespace ddpscope::tuner::emulation;

TEST_CASE("token bucket: 1 ms burst and 100 ms queue at the link's rate") {
  TokenBucket ten = token_bucket_for(10);
  CHECK(ten.rate_bits == 10'000'000'000ull);
  CHECK(ten.burst_bytes == 1'250'000);    // 10e9 / 8 / 1000
  CHECK(ten.limit_bytes == 125'000'000);  // 100 x the burst
  TokenBucket one = token_bucket_for(1);
  CHECK(one.rate_bits == 1'000'000'000ull);
  CHECK(one.burst_bytes == 125'000);
  CHECK(one.limit_bytes == 12'500'000);
}

TEST_CASE("token bucket: slow links keep a burst of one GSO segment and a 4 MiB queue") {
  TokenBucket slow = token_bucket_for(0.2);
  CHECK(slow.rate_bits == 200'000'000ull);
  CHECK(slow.burst_bytes == 96 * 1024);  // 25'000 bytes per ms is less
  CHECK(slow.limit_bytes == 4 * 1024 * 1024);
}

TEST_CASE("tbf command: shapes the root qdisc of one device in one namespace") {
  auto argv = tbf_command("/usr/sbin/tc", "ns0", "dds-uplink", token_bucket_for(1));
  std::vector<std::string> expected{"/usr/sbin/tc",  "-n",         "ns0",    "qdisc", "add",
                                    "dev",           "dds-uplink", "root",   "tbf",   "rate",
                                    "1000000000bit", "burst",      "125000", "limit", "12500000"};
  CHECK(argv == expected);
}

TEST_CASE("programs: found on PATH or in /usr/sbin, absent ones are empty") {
  CHECK(find_program("sh").rfind('/', 0) == 0);
  CHECK(find_program("ddpscope-no-such-program").empty());
}
