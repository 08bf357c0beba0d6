// The renderers' name for the one atomic-file writer (profiler/core/atomic_file.h).
#pragma once

#include "profiler/core/atomic_file.h"

namespace ddpscope::reports {

using core::write_atomically;

}  // namespace ddpscope::reports
