#include "profiler/core/units.h"

#include <charconv>
#include <cmath>
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

// printf's "%.15g" read back by strtod, both correctly rounded, as
// to_chars and from_chars are: a CSV of 1,024 ranks rounds millions of
// figures, and printf's own took seconds of it. A value whose 15 digits pass
// DBL_MAX stays as it is (strtod made it infinite).
double round_significant(double v) {
  if (!std::isfinite(v) || v == 0) return v;
  char buf[32];
  const char* end = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general, 15).ptr;
  double out = v;
  std::from_chars(buf, end, out);
  return out;
}

}  // namespace ddpscope
