#include "tuner/emulation/tcp_congestion.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

#include "tuner/emulation/emulation_error.h"
#include "tuner/emulation/rank_placement.h"

namespace ddpscope::tuner::emulation {
namespace {

constexpr const char* kSysctl = "/proc/sys/net/ipv4/tcp_congestion_control";
constexpr const char* kAllowed = "/proc/sys/net/ipv4/tcp_allowed_congestion_control";

// The first line of a /proc/sys file, "" when it cannot be read.
std::string read_sysctl(const char* path) {
  std::ifstream in(path);
  std::string value;
  std::getline(in, value);
  return value;
}

// Writes `value` and a newline to a /proc/sys file; the error, "" on success.
std::string write_sysctl(const char* path, const std::string& value) {
  std::ofstream out(path);
  out << value << '\n';
  out.flush();
  return out ? "" : std::string(path) + ": " + strerror(errno);
}

bool lists(const std::string& algorithms, const std::string& algorithm) {
  std::istringstream words(algorithms);
  for (std::string word; words >> word;)
    if (word == algorithm) return true;
  return false;
}

// A namespace other than the host's may take as its default only an algorithm
// the host allows (the kernel answers EPERM otherwise), and the host's list
// (net.ipv4.tcp_allowed_congestion_control, one for the whole machine) holds
// reno and the kernel's built-in default: "reno bbr" where the kernel was built
// with bbr, as this project's VMs were from 2026-11-27. So, for the moment of
// setting it, the algorithm is added to the host's list, which is then put
// back as it was: the host is left as found, and the namespace keeps what it
// was given.
class AllowedForNamespaces {
 public:
  explicit AllowedForNamespaces(const std::string& algorithm) : before_(read_sysctl(kAllowed)) {
    if (!before_.empty() && !lists(before_, algorithm))
      widened_ = write_sysctl(kAllowed, before_ + " " + algorithm).empty();
  }
  ~AllowedForNamespaces() {
    if (widened_) write_sysctl(kAllowed, before_);
  }
  AllowedForNamespaces(const AllowedForNamespaces&) = delete;
  AllowedForNamespaces& operator=(const AllowedForNamespaces&) = delete;

 private:
  const std::string before_;
  bool widened_ = false;
};

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
  AllowedForNamespaces allowed(algorithm);
  const std::string error = in_namespace(netns, [&] { return write_sysctl(kSysctl, algorithm); });
  if (!error.empty())
    throw EmulationError("cannot set TCP congestion control " + algorithm + " in namespace " +
                         netns + ": " + error);
}

std::string congestion_control(const std::string& netns) {
  std::string algorithm;
  in_namespace(netns, [&] {
    algorithm = read_sysctl(kSysctl);
    return std::string();
  });
  return algorithm;
}

}  // namespace ddpscope::tuner::emulation
