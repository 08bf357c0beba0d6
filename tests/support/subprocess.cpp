#include "tests/support/subprocess.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <utility>
#include <vector>

namespace ddpscope::testing {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The directories made by temp_dir, each removed when the process that made
// it exits (unless DDPSCOPE_KEEP_TEST_DIRS is set, to look at what a failing
// test left). A forked child that exits normally runs this destructor too:
// it removes its own, never its parent's.
class TempDirs {
 public:
  void add(const std::filesystem::path& dir) { dirs_.push_back({getpid(), dir}); }
  ~TempDirs() {
    if (std::getenv("DDPSCOPE_KEEP_TEST_DIRS")) return;
    std::error_code ignored;
    for (const auto& [maker, dir] : dirs_)
      if (maker == getpid()) std::filesystem::remove_all(dir, ignored);
  }

 private:
  std::vector<std::pair<pid_t, std::filesystem::path>> dirs_;
};

}  // namespace

std::string temp_dir(const std::string& name) {
  static TempDirs made;
  static int counter = 0;
  auto dir =
      std::filesystem::temp_directory_path() /
      ("ddpscope-test-" + std::to_string(getpid()) + "-" + std::to_string(counter++) + "-" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  made.add(dir);
  return dir;
}

Process::Process(const std::vector<std::string>& argv,
                 const std::map<std::string, std::string>& env) {
  std::string dir = temp_dir("proc");
  out_path_ = dir + "/stdout";
  err_path_ = dir + "/stderr";
  pid_ = fork();
  if (pid_ == 0) {
    int out = open(out_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int err = open(err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(out, 1);
    dup2(err, 2);
    for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
}

Process::~Process() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
}

bool Process::wait_for_line(const std::string& line, int timeout_ms) {
  for (int waited = 0; waited < timeout_ms; waited += 10) {
    std::istringstream lines(slurp(out_path_));
    for (std::string l; std::getline(lines, l);)
      if (l == line) return true;
    if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
      pid_ = -1;
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

void Process::signal(int sig) {
  if (pid_ > 0) kill(pid_, sig);
}

Result Process::wait() {
  Result r;
  int status = 0;
  if (pid_ > 0 && waitpid(pid_, &status, 0) == pid_)
    r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  pid_ = -1;
  r.out = slurp(out_path_);
  r.err = slurp(err_path_);
  return r;
}

Result run(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env) {
  Process p(argv, env);
  return p.wait();
}

}  // namespace ddpscope::testing
