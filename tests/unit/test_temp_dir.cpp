// The test support's temporary directories: gone when their process exits,
// and a forked child's exit takes only its own.
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "tests/support/subprocess.h"

namespace fs = std::filesystem;

TEST_CASE("temp_dir: a child's directory goes with it, its parent's stays") {
  const std::string mine = ddpscope::testing::temp_dir("parent");
  int names[2];
  REQUIRE(pipe(names) == 0);
  fflush(nullptr);  // the child's exit flushes its copy of our buffers
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    const std::string its = ddpscope::testing::temp_dir("child");
    const bool written = write(names[1], its.c_str(), its.size()) == ssize_t(its.size());
    close(names[1]);
    std::exit(written && fs::is_directory(its) ? 0 : 1);  // a normal exit: destructors run
  }
  close(names[1]);
  char buf[4096] = {};
  const ssize_t n = read(names[0], buf, sizeof buf - 1);
  close(names[0]);
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  REQUIRE(n > 0);
  const std::string its(buf, size_t(n));
  CHECK(its.find("ddpscope-test-") != std::string::npos);
  CHECK_FALSE(fs::exists(its));
  CHECK(fs::is_directory(mine));
}
