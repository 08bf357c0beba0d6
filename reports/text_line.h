// One printf-formatted line of the terminal report.
#pragma once

#include <cstdarg>
#include <cstdio>
#include <ostream>

namespace ddpscope::reports {

inline void line(std::ostream& out, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
inline void line(std::ostream& out, const char* fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  out << buf << "\n";
}

}  // namespace ddpscope::reports
