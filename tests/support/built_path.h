// Where the build put one of its files, for a test or benchmark wherever its
// build folder is. CMake gives them build-relative paths
// (ddpscope_test_definitions in the top CMakeLists.txt) rather than absolute
// ones, so that a compile line is the same in every clone and the compiler
// cache hits in a fresh clone; the program resolves them here, when it runs.
#pragma once

#include <filesystem>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>

namespace ddpscope::testing {

// The build folder: the nearest folder above the running executable that
// holds a CMakeCache.txt (a sanitizer leg's build inside build/ is its own).
inline const std::string& build_root() {
  static const std::string root = [] {
    namespace fs = std::filesystem;
    const fs::path exe = fs::read_symlink("/proc/self/exe");
    for (fs::path dir = exe.parent_path(); dir.has_relative_path(); dir = dir.parent_path())
      if (fs::exists(dir / "CMakeCache.txt")) return dir.string();
    throw std::runtime_error(exe.string() + ": no CMakeCache.txt above it (not in a build folder)");
  }();
  return root;
}

// `relative` to the build folder, as an absolute path that lives as long as
// the process (a C string, as the literal it replaces was).
inline const char* built(const char* relative) {
  static std::mutex mu;
  static std::set<std::string> paths;
  std::lock_guard<std::mutex> lock(mu);
  return paths.insert(build_root() + "/" + relative).first->c_str();
}

}  // namespace ddpscope::testing
