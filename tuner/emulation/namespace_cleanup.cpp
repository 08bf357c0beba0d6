#include "tuner/emulation/namespace_cleanup.h"

#include <dirent.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "tuner/emulation/emulation_error.h"
#include "tuner/emulation/system_command.h"

namespace ddpscope::tuner::emulation {
namespace {

constexpr const char* kNetnsDir = "/run/netns/";  // where `ip netns add` puts the names
constexpr int kMaxNamespaces = 300;               // 250 nodes, a switch, and room to spare
constexpr size_t kMaxPath = 128;
constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

// Plain arrays, not std::vector: the signal handler reads them.
char g_paths[kMaxNamespaces][kMaxPath];
volatile sig_atomic_t g_count = 0;
struct sigaction g_previous[NSIG];

// `ip netns del`'s own steps; both are async-signal-safe.
void remove_path(const char* path) {
  umount2(path, MNT_DETACH);
  unlink(path);
}

void on_signal(int sig) {
  if (pid_t pid = running_command(); pid > 0) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
  remove_registered_namespaces();
  signal(sig, SIG_DFL);
  raise(sig);  // delivered when this handler returns: the process dies of the signal
}

bool process_exists(long pid) { return kill(pid_t(pid), 0) == 0 || errno == EPERM; }

// The pid in "ddpscope-<pid>-...", or 0 when `name` is not one of ours.
long owner_pid(const std::string& name) {
  const std::string head = "ddpscope-";
  if (name.rfind(head, 0) != 0) return 0;
  char* end = nullptr;
  long pid = strtol(name.c_str() + head.size(), &end, 10);
  return end && *end == '-' && pid > 0 ? pid : 0;
}

}  // namespace

std::string run_prefix() { return "ddpscope-" + std::to_string(getpid()) + "-"; }

void register_namespace(const std::string& name) {
  const std::string path = kNetnsDir + name;
  if (g_count >= kMaxNamespaces || path.size() >= kMaxPath)
    throw EmulationError("too many namespaces, or a name too long: " + name);
  std::strncpy(g_paths[g_count], path.c_str(), kMaxPath - 1);
  // The path is complete before the handler can see it counted.
  std::atomic_signal_fence(std::memory_order_seq_cst);
  g_count = g_count + 1;
}

void remove_registered_namespaces() {
  while (g_count > 0) {
    remove_path(g_paths[g_count - 1]);
    g_count = g_count - 1;
  }
}

std::vector<std::string> remove_stale_namespaces() {
  std::vector<std::string> removed;
  DIR* dir = opendir(kNetnsDir);
  if (!dir) return removed;  // no namespaces at all yet
  while (dirent* e = readdir(dir)) {
    const std::string name = e->d_name;
    const long pid = owner_pid(name);
    if (pid == 0 || pid == getpid() || process_exists(pid)) continue;
    remove_path((kNetnsDir + name).c_str());
    removed.push_back(name);
  }
  closedir(dir);
  return removed;
}

CleanupGuard::CleanupGuard() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  for (int sig : kSignals) sigaddset(&sa.sa_mask, sig);  // one cleanup at a time
  for (int sig : kSignals) {
    sigaction(sig, nullptr, &g_previous[sig]);
    // A signal the caller ignores (nohup) stays ignored, as the shell would have it.
    if (g_previous[sig].sa_handler != SIG_IGN) sigaction(sig, &sa, nullptr);
  }
}

CleanupGuard::~CleanupGuard() {
  remove_registered_namespaces();
  for (int sig : kSignals) sigaction(sig, &g_previous[sig], nullptr);
}

}  // namespace ddpscope::tuner::emulation
