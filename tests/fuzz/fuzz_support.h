// What every fuzz target shares: the rule it checks, and scratch files.
//
// The rule: whatever the input, a parser either succeeds or throws
// ddpscope::InputError (one line, exit 2 in the CLI). Any other exception
// escapes the target, and libFuzzer reports it as a crash, as it does a
// sanitizer finding, a hang (-timeout) or a leak.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "profiler/core/input_error.h"

namespace ddpscope::fuzz {

inline std::string as_text(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// Runs `f`; bad input is the expected outcome, not a finding.
template <typename F>
void refusing_bad_input(F&& f) {
  try {
    f();
  } catch (const InputError&) {
  }
}

// A file holding the fuzz input, as a user's file would be read: on tmpfs
// (fast), named per process, removed with SQLite's side files afterwards.
class ScratchFile {
 public:
  ScratchFile(const std::string& name, const uint8_t* data, size_t size)
      : path_(dir() + "/ddpscope-fuzz-" + std::to_string(getpid()) + "-" + name) {
    clean();
    if (FILE* f = fopen(path_.c_str(), "wb")) {
      if (size) fwrite(data, 1, size, f);
      fclose(f);
    }
  }
  ~ScratchFile() { clean(); }
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;
  const std::string& path() const { return path_; }

  // A path beside the scratch files for outputs (also removed).
  static std::string sibling(const std::string& name) {
    return dir() + "/ddpscope-fuzz-" + std::to_string(getpid()) + "-" + name;
  }
  static void remove_with_side_files(const std::string& path) {
    for (const char* suffix : {"", "-journal", "-wal", "-shm"})
      std::remove((path + suffix).c_str());
  }

 private:
  static std::string dir() { return access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp"; }
  void clean() const { remove_with_side_files(path_); }
  std::string path_;
};

}  // namespace ddpscope::fuzz
