// The TCP congestion control of an emulated node. A new network namespace
// takes the host's (this development VM's image sets bbr), so without this an
// emulated cluster's links behave as whatever host the sweep ran on. BBR's
// pacing of Gloo's ring at 64 KiB segments put a step's CPU work after its
// wire time (all-reduces of 512 KiB on 4x1:inter=1gbit, comm only: 402-456
// ms under bbr, 225 ms under cubic, against 201 ms of wire; docs/tuner.md,
// "Emulation"), an effect of the host, not of the topology. Every node gets
// the kernel's default, cubic, which clusters run unless configured otherwise.
#pragma once

#include <string>

namespace ddpscope::tuner::emulation {

constexpr const char* kEmulatedCongestionControl = "cubic";

// Sets net.ipv4.tcp_congestion_control to `algorithm` inside the network
// namespace `netns` (a name under /run/netns); by hand:
//   ip netns exec NETNS sysctl -w net.ipv4.tcp_congestion_control=cubic
// Throws EmulationError naming the namespace and the reason when it cannot.
void set_congestion_control(const std::string& netns, const std::string& algorithm);

// What `netns` uses now ("" when it cannot be read): for tests and messages.
std::string congestion_control(const std::string& netns);

}  // namespace ddpscope::tuner::emulation
