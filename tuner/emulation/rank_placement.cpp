#include "tuner/emulation/rank_placement.h"

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace ddpscope::tuner::emulation {

bool join_network_namespace(const std::string& netns, std::string* error) {
  const std::string path = "/run/netns/" + netns;
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 || setns(fd, CLONE_NEWNET) != 0) {
    *error = "cannot enter network namespace " + netns + ": " + strerror(errno);
    if (fd >= 0) close(fd);
    return false;
  }
  close(fd);
  return true;
}

bool enter_node_of_rank(const EmulatedCluster& cluster, int rank, std::string* error) {
  const int node = cluster.node_of_rank(rank);
  if (rank < 0 || node >= cluster.topology().nodes) {
    *error = "rank " + std::to_string(rank) + " is outside topology " + cluster.topology().name();
    return false;
  }
  if (!join_network_namespace(cluster.node_namespace(node), error)) return false;
  setenv("DDPSCOPE_TUNE_IFACE_ADDR", cluster.node_address(node).c_str(), 1);
  unsetenv("DDPSCOPE_TUNE_IFACE");
  return true;
}

}  // namespace ddpscope::tuner::emulation
