#include "profiler/core/atomic_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace ddpscope::core {

void replace_atomically(const std::string& path,
                        const std::function<void(const std::string& tmp)>& fill) {
  const std::string tmp = path + ".tmp-" + std::to_string(getpid());
  std::error_code ec;
  std::filesystem::remove(tmp, ec);  // a leftover of a dead process with our pid
  try {
    fill(tmp);
    std::filesystem::rename(tmp, path);
  } catch (const std::filesystem::filesystem_error& e) {
    std::filesystem::remove(tmp, ec);
    throw std::runtime_error(path + ": " + e.code().message());
  } catch (...) {
    std::filesystem::remove(tmp, ec);
    throw;
  }
}

void write_atomically(const std::string& path, const std::function<void(std::ostream&)>& fill) {
  replace_atomically(path, [&](const std::string& tmp) {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error(path + ": cannot write (" + strerror(errno) + ")");
    fill(out);
    out.flush();
    if (!out) throw std::runtime_error(path + ": write failed (" + strerror(errno) + ")");
  });
}

}  // namespace ddpscope::core
