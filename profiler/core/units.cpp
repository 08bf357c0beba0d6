#include "profiler/core/units.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

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

double round_significant(double v) {
  if (!std::isfinite(v) || v == 0) return v;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.15g", v);
  return std::strtod(buf, nullptr);
}

}  // namespace ddpscope
