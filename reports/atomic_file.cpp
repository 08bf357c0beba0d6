#include "reports/atomic_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace ddpscope::reports {

void write_atomically(const std::string& path, const std::function<void(std::ostream&)>& fill) {
  std::string tmp = path + ".tmp-" + std::to_string(getpid());
  try {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error(path + ": cannot write (" + strerror(errno) + ")");
    fill(out);
    out.flush();
    if (!out) throw std::runtime_error(path + ": write failed (" + strerror(errno) + ")");
    out.close();
    std::filesystem::rename(tmp, path);
  } catch (const std::filesystem::filesystem_error& e) {
    std::error_code ec;
    std::filesystem::remove(tmp, ec);
    throw std::runtime_error(path + ": " + e.code().message());
  } catch (...) {
    std::error_code ec;
    std::filesystem::remove(tmp, ec);
    throw;
  }
}

}  // namespace ddpscope::reports
