#include "tuner/emulation/system_command.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "tuner/emulation/emulation_error.h"

namespace ddpscope::tuner::emulation {
namespace {

volatile sig_atomic_t g_running = 0;  // pid_t is an int on Linux

std::string command_line(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) s += (s.empty() ? "" : " ") + a;
  return s;
}

[[noreturn]] void exec_child(const std::vector<std::string>& argv, int stderr_fd) {
  // Our cleanup handlers belong to the parent, never to an `ip` process.
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) signal(sig, SIG_DFL);
  int devnull = open("/dev/null", O_WRONLY);
  if (devnull >= 0) dup2(devnull, STDOUT_FILENO);
  dup2(stderr_fd, STDERR_FILENO);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  execv(args[0], args.data());
  dprintf(STDERR_FILENO, "cannot run %s: %s\n", args[0], strerror(errno));
  _exit(127);
}

std::string read_all(int fd) {
  std::string out;
  char buf[4096];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n > 0) {
      out.append(buf, size_t(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      return out;
    }
  }
}

}  // namespace

std::string find_program(const std::string& program) {
  std::string dirs = getenv("PATH") ? getenv("PATH") : "";
  dirs += ":/usr/sbin:/sbin:/usr/bin:/bin";
  std::stringstream in(dirs);
  for (std::string dir; std::getline(in, dir, ':');) {
    if (dir.empty()) continue;
    std::string path = dir + "/" + program;
    if (access(path.c_str(), X_OK) == 0) return path;
  }
  return "";
}

void run_command(const std::vector<std::string>& argv) {
  int err[2];
  if (pipe2(err, O_CLOEXEC) != 0)
    throw EmulationError("cannot create a pipe: " + std::string(strerror(errno)));
  pid_t pid = fork();
  if (pid == 0) exec_child(argv, err[1]);
  close(err[1]);
  if (pid < 0) {
    close(err[0]);
    throw EmulationError("cannot start " + argv[0] + ": " + strerror(errno));
  }
  g_running = pid;
  std::string message = read_all(err[0]);
  close(err[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  g_running = 0;
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return;
  message = message.substr(0, message.find('\n'));
  if (message.empty()) message = "exit status " + std::to_string(status);
  throw EmulationError("`" + command_line(argv) + "` failed: " + message);
}

pid_t running_command() { return g_running; }

}  // namespace ddpscope::tuner::emulation
