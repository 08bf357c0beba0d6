#include "tuner/emulation/tcp_congestion.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>
#include <thread>

#include "tuner/emulation/emulation_error.h"
#include "tuner/emulation/rank_placement.h"

namespace ddpscope::tuner::emulation {
namespace {

constexpr const char* kSysctl = "/proc/sys/net/ipv4/tcp_congestion_control";

// Runs `work` on a thread of its own that has joined `netns`: setns changes
// only the calling thread, and /proc/sys/net shows the namespace of the
// thread that opens it, so this process's other threads stay where they are.
// Returns the error, "" on success.
std::string in_namespace(const std::string& netns, const std::function<std::string()>& work) {
  std::string error;
  std::thread worker([&] {
    if (join_network_namespace(netns, &error)) error = work();
  });
  worker.join();
  return error;
}

}  // namespace

void set_congestion_control(const std::string& netns, const std::string& algorithm) {
  const std::string error = in_namespace(netns, [&]() -> std::string {
    std::ofstream out(kSysctl);
    out << algorithm << '\n';
    out.flush();
    if (!out) return std::string(kSysctl) + ": " + strerror(errno);
    return "";
  });
  if (!error.empty())
    throw EmulationError("cannot set TCP congestion control " + algorithm + " in namespace " +
                         netns + ": " + error);
}

std::string congestion_control(const std::string& netns) {
  std::string algorithm;
  in_namespace(netns, [&]() -> std::string {
    std::ifstream in(kSysctl);
    std::getline(in, algorithm);
    return "";
  });
  return algorithm;
}

}  // namespace ddpscope::tuner::emulation
