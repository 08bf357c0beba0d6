// Sizes as people read them, shared by every output that names a size: the
// report's tables and `check`'s metric names ("bucket 0 (1.0 MiB) time").
#pragma once

#include <string>

namespace ddpscope {

// "1.5 MiB", "512 B": binary units, one decimal above bytes.
std::string human_bytes(double bytes);

}  // namespace ddpscope
