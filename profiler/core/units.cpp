#include "profiler/core/units.h"

#include <cstdio>

namespace ddpscope {

std::string human_bytes(double b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (b >= 1024 && u < 4) {
    b /= 1024;
    ++u;
  }
  char buf[64];
  if (u == 0)
    snprintf(buf, sizeof buf, "%.0f B", b);
  else
    snprintf(buf, sizeof buf, "%.1f %s", b, units[u]);
  return buf;
}

}  // namespace ddpscope
