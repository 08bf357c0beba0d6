#include "profiler/core/rank_launcher.h"

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "profiler/core/rank_env.h"

namespace ddpscope::core {
namespace {

std::vector<pid_t> g_children;
std::vector<RankExitRecord> g_ends;  // by rank, as each is reaped
constexpr int kForwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
struct sigaction g_callers[NSIG];  // the handlers installed before ours

void call_callers_handler(int sig, siginfo_t* info, void* context) {
  const struct sigaction& h = g_callers[sig];
  if (h.sa_flags & SA_SIGINFO) {
    if (h.sa_sigaction) h.sa_sigaction(sig, info, context);
  } else if (h.sa_handler != SIG_DFL && h.sa_handler != SIG_IGN) {
    h.sa_handler(sig);
  }
}

// With LaunchSpec::before_forward the handler only notes the signal; the
// launcher's loop runs before_forward, then forwards it.
volatile sig_atomic_t g_defer = 0;
volatile sig_atomic_t g_pending = 0;          // the signal waiting to be forwarded
volatile sig_atomic_t g_pending_reached = 0;  // the terminal sent it to the ranks already

void forward_to_children(int sig) {
  for (pid_t pid : g_children)
    if (pid > 0) kill(pid, sig);
}

// A signal another process sent us goes on to every rank. One the terminal
// generated (Ctrl-C) already reached them: they share our process group.
// The caller's own handler (e.g. tune's cleanup of emulated networks) runs after.
void forward(int sig, siginfo_t* info, void* context) {
  bool reached = info && info->si_code == SI_KERNEL;
  if (g_defer) {
    g_pending = sig;
    g_pending_reached = reached;
  } else if (!reached) {
    forward_to_children(sig);
  }
  call_callers_handler(sig, info, context);
}

void install_forwarding() {
  struct sigaction sa {};
  sa.sa_sigaction = forward;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  for (int s : kForwarded) {
    struct sigaction current {};
    sigaction(s, &sa, &current);
    if (current.sa_sigaction != forward) g_callers[s] = current;  // not ours from a previous launch
  }
}

[[noreturn]] void exec_child(const LaunchSpec& spec, int rank) {
  for (int s : kForwarded) signal(s, SIG_DFL);
  for (const auto& [k, v] : spec.env) setenv(k.c_str(), v.c_str(), 1);
  if (spec.in_child && !spec.in_child(rank)) _exit(127);
  if (spec.nproc > 0) {
    std::string r = std::to_string(rank), n = std::to_string(spec.nproc);
    setenv(rank_env::kTorchrunRank, r.c_str(), 1);
    setenv(rank_env::kTorchrunLocalRank, r.c_str(), 1);
    setenv(rank_env::kTorchrunGroupRank, "0", 1);
    setenv(rank_env::kTorchrunWorldSize, n.c_str(), 1);
    setenv(rank_env::kTorchrunLocalWorldSize, n.c_str(), 1);
  }
  std::vector<char*> argv;
  for (const auto& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  execvp(argv[0], argv.data());
  fprintf(stderr, "ddpscope: cannot run %s: %s\n", argv[0], strerror(errno));
  _exit(127);
}

// Which rank `pid` was; -1 if not one of ours. Its slot is marked reaped.
int reap(pid_t pid, int status) {
  for (size_t r = 0; r < g_children.size(); ++r)
    if (g_children[r] == pid) {
      g_children[r] = -1;
      if (WIFEXITED(status)) g_ends[r].exit_code = WEXITSTATUS(status);
      if (WIFSIGNALED(status)) g_ends[r].signal = WTERMSIG(status);
      return int(r);
    }
  return -1;
}

int status_code(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

// After one rank failed, the others would wait for it forever in their next
// collective: ask them to stop, then insist.
void stop_remaining(size_t live) {
  for (pid_t pid : g_children)
    if (pid > 0) kill(pid, SIGTERM);
  for (int waited = 0; live > 0 && waited < 100; ++waited) {
    int status;
    pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid > 0) {
      if (reap(pid, status) >= 0) --live;
      continue;
    }
    usleep(50000);
  }
  for (pid_t pid : g_children)
    if (pid > 0) kill(pid, SIGKILL);
  int status;
  for (pid_t pid; (pid = wait(&status)) > 0;) reap(pid, status);
}

}  // namespace

namespace {

// The launcher's loop while polling: a deferred signal goes on to the ranks
// after before_forward, and the watch runs every watch_ms.
class Watcher {
 public:
  explicit Watcher(const LaunchSpec& spec) : spec_(spec) { g_defer = spec.before_forward ? 1 : 0; }
  ~Watcher() { g_defer = 0; }
  // One nap of the loop; true when the watch asks to stop the ranks.
  bool turn() {
    if (int sig = g_pending) {
      g_pending = 0;
      spec_.before_forward(sig);
      if (!g_pending_reached) forward_to_children(sig);
    }
    usleep(kNapUs);
    waited_us_ += kNapUs;
    if (!spec_.watch || spec_.watch_ms <= 0 || waited_us_ < int64_t(spec_.watch_ms) * 1000)
      return false;
    waited_us_ = 0;
    return spec_.watch();
  }

 private:
  static constexpr int kNapUs = 20000;
  const LaunchSpec& spec_;
  int64_t waited_us_ = 0;
};

}  // namespace

int launch_and_wait(const LaunchSpec& spec, std::vector<RankExitRecord>* ends) {
  int ranks = spec.nproc > 0 ? spec.nproc : 1;
  g_children.clear();
  g_children.reserve(size_t(ranks));  // no reallocation under the forwarding handler
  g_ends.assign(size_t(ranks), RankExitRecord{});
  for (int r = 0; r < ranks; ++r) g_ends[size_t(r)].rank = r;
  install_forwarding();
  fflush(nullptr);
  for (int r = 0; r < ranks; ++r) {
    pid_t pid = fork();
    if (pid == 0) exec_child(spec, r);
    if (pid < 0) {
      fprintf(stderr, "ddpscope: cannot start rank %d: %s\n", r, strerror(errno));
      stop_remaining(g_children.size());
      if (ends) *ends = g_ends;
      return 127;
    }
    g_children.push_back(pid);
  }
  size_t live = g_children.size();
  int result = 0;
  const bool polling = spec.watch || spec.before_forward;
  Watcher watcher(spec);
  while (live > 0) {
    int status;
    pid_t pid = waitpid(-1, &status, polling ? WNOHANG : 0);
    if (pid == 0) {  // polling, and no rank has ended
      if (watcher.turn()) {
        result = result ? result : 128 + SIGTERM;
        stop_remaining(live);
        live = 0;
      }
      continue;
    }
    if (pid < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (reap(pid, status) < 0) continue;
    --live;
    int code = status_code(status);
    if (code != 0 && result == 0) {
      result = code;
      if (spec.nproc > 0 && live > 0) {
        stop_remaining(live);
        live = 0;
      }
    }
  }
  if (ends) *ends = g_ends;
  return result;
}

int free_port() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  int port = 29500;
  if (fd >= 0 && bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
    port = ntohs(addr.sin_port);
  if (fd >= 0) close(fd);
  return port;
}

}  // namespace ddpscope::core
