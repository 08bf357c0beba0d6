// Sizes as people read them, shared by every output that names a size: the
// report's tables and `check`'s metric names ("bucket 0 (1.0 MiB) time").
#pragma once

#include <string>

namespace ddpscope {

// "1.5 MiB", "512 B": binary units, one decimal above bytes.
std::string human_bytes(double bytes);

// `v` to 15 significant digits: an interpolated quantile (profiler/core/stats.h)
// of integer nanoseconds carries float noise in its 17th digit
// (19421.188699999995 for 19421.1887); machine-readable outputs print this, so
// the shortest text that reads back is the figure itself. Nanosecond
// resolution survives: 15 digits hold 11 days in ms with 6 decimals.
double round_significant(double v);

}  // namespace ddpscope
