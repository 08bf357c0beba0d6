// The Python start-up hook's facts (ddp_info, fsdp_info rows) are key/value
// text; these read one key of one instance's facts, with a default where the
// key is missing (an older hook, a torch that did not say).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>

namespace ddpscope::analysis {

using Facts = std::map<std::string, std::string>;

inline std::string fact_text(const Facts& kv, const char* key) {
  auto it = kv.find(key);
  return it == kv.end() ? "" : it->second;
}

inline uint64_t fact_number(const Facts& kv, const char* key) {
  auto it = kv.find(key);
  return it == kv.end() ? 0 : std::strtoull(it->second.c_str(), nullptr, 10);
}

inline int64_t fact_signed(const Facts& kv, const char* key) {
  auto it = kv.find(key);
  return it == kv.end() ? 0 : std::strtoll(it->second.c_str(), nullptr, 10);
}

inline bool fact_flag(const Facts& kv, const char* key) { return fact_text(kv, key) == "1"; }

}  // namespace ddpscope::analysis
