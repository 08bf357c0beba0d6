#include "tuner/json_file.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace ddpscope::tuner {
namespace {

using nlohmann::json;

// "[json.exception.parse_error.101] parse error at ..." -> "parse error at ...".
std::string reason(const std::exception& e) {
  std::string msg = e.what();
  if (auto at = msg.find("] "); at != std::string::npos) msg.erase(0, at + 2);
  return msg;  // InputError puts a quoted newline on the line
}

}  // namespace

std::string read_json_text(const std::string& path, const std::string& kind) {
  std::error_code ec;
  // A directory opens as an empty stream on Linux; say what it is instead.
  if (std::filesystem::is_directory(path, ec))
    throw InputError(path, "is a directory, not a " + kind);
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw InputError(path, "cannot open the file (" + std::string(std::strerror(errno)) + ")");
  std::string text;
  char buf[1 << 16];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    text.append(buf, size_t(in.gcount()));
    if (text.size() > kMaxJsonFileBytes)
      throw InputError(
          path, "larger than " + std::to_string(kMaxJsonFileBytes >> 20) + " MiB: not a " + kind);
  }
  if (in.bad())
    throw InputError(path, "cannot read the file (" + std::string(std::strerror(errno)) + ")");
  return text;
}

json parse_json_text(const std::string& path, const std::string& text) {
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    throw InputError(path, "invalid JSON at byte " + std::to_string(e.byte) + ": " + reason(e));
  } catch (const json::exception& e) {
    // A number no double holds (1e400): "number overflow parsing '1e400'".
    throw InputError(path, "invalid JSON: " + reason(e));
  }
}

}  // namespace ddpscope::tuner
