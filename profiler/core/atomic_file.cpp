#include "profiler/core/atomic_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "profiler/core/input_error.h"

namespace fs = std::filesystem;

namespace ddpscope::core {

void check_output_path(const std::string& path) {
  if (path.empty()) throw InputError("an output path is empty");
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw InputError(path, "is a directory, not a file");
  fs::path parent = fs::path(path).parent_path();
  if (parent.empty()) parent = ".";
  if (!fs::is_directory(parent, ec))
    throw InputError(path, "cannot write: the directory " + parent.string() + " does not exist");
  if (access(parent.c_str(), W_OK | X_OK) != 0)
    throw InputError(path, "cannot write in " + parent.string() + " (" + strerror(errno) + ")");
}

void replace_atomically(const std::string& path,
                        const std::function<void(const std::string& tmp)>& fill) {
  check_output_path(path);
  const std::string tmp = path + ".tmp-" + std::to_string(getpid());
  std::error_code ec;
  fs::remove(tmp, ec);  // a leftover of a dead process with our pid
  try {
    fill(tmp);
    fs::rename(tmp, path);
  } catch (const fs::filesystem_error& e) {
    fs::remove(tmp, ec);
    throw std::runtime_error(path + ": " + e.code().message());
  } catch (...) {
    fs::remove(tmp, ec);
    throw;
  }
}

void write_atomically(const std::string& path, const std::function<void(std::ostream&)>& fill) {
  replace_atomically(path, [&](const std::string& tmp) {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw InputError(path, std::string("cannot write (") + strerror(errno) + ")");
    fill(out);
    out.flush();
    if (!out) throw std::runtime_error(path + ": write failed (" + strerror(errno) + ")");
  });
}

}  // namespace ddpscope::core
