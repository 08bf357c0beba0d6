// JSON text written by hand, for the writers that stream millions of events
// (the Chrome trace, the Kineto traces): integers, microseconds and strings
// appended to a buffer without building a document.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ddpscope::reports::json_text {

void put(std::string& out, int64_t v);

// A quoted JSON string. Names are almost always plain ASCII; anything else
// (quotes, control characters, invalid UTF-8 from a kernel or NVTX name) is
// escaped, and invalid UTF-8 replaced by U+FFFD.
void put(std::string& out, std::string_view s);

// Nanoseconds as microseconds with exact nanosecond decimals ("12.345"):
// integer arithmetic, so no rounding and no locale. A negative value is 0.
void put_us(std::string& out, int64_t ns);

}  // namespace ddpscope::reports::json_text
