#include "reports/trace/json_text.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <nlohmann/json.hpp>

namespace ddpscope::reports::json_text {

void put(std::string& out, int64_t v) {
  char buf[24];
  out.append(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
}

void put_us(std::string& out, int64_t ns) {
  uint64_t v = uint64_t(std::max<int64_t>(ns, 0));
  put(out, int64_t(v / 1000));
  char frac[8];
  if (v % 1000) out.append(frac, snprintf(frac, sizeof frac, ".%03u", unsigned(v % 1000)));
}

void put(std::string& out, std::string_view s) {
  auto plain = [](char c) { return c >= 0x20 && c < 0x7f && c != '"' && c != '\\'; };
  if (std::all_of(s.begin(), s.end(), plain)) {
    out.append(1, '"').append(s).append(1, '"');
    return;
  }
  auto j = nlohmann::json(std::string(s));
  out += j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace ddpscope::reports::json_text
