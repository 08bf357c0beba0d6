// The interleaving harness the overhead benchmarks share: the benchmark runs
// itself again as `SELF --inner N` in a child, with or without the injector in
// its environment, and reads back the median, p10 and p90 the child prints.
// A fresh process per run keeps the two configurations from sharing state.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

namespace ddpscope::bench {

struct Figures {
  double median = 0, p10 = 0, p90 = 0;
};

using Environment = std::vector<std::pair<std::string, std::string>>;

// Runs `self --inner n` with `unset` removed from and `env` added to its
// environment; the child prints "MEDIAN P10 P90" on stdout.
inline Figures run_inner(const char* self, long n, const Environment& env,
                         const std::vector<std::string>& unset = {}) {
  int fds[2];
  if (pipe(fds) != 0) exit(1);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], 1);
    for (const auto& name : unset) unsetenv(name.c_str());
    for (const auto& [name, value] : env) setenv(name.c_str(), value.c_str(), 1);
    execl(self, self, "--inner", std::to_string(n).c_str(), nullptr);
    _exit(127);
  }
  close(fds[1]);
  char buf[128] = {};
  ssize_t got = read(fds[0], buf, sizeof buf - 1);
  close(fds[0]);
  waitpid(pid, nullptr, 0);
  Figures f;
  if (got > 0) sscanf(buf, "%lf %lf %lf", &f.median, &f.p10, &f.p90);
  return f;
}

}  // namespace ddpscope::bench
