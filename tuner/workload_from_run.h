// A workload from a recorded run: DDP's buckets as the analysis found them,
// each replayed as one gradient of its recorded size, with the compute gap
// before it as its backward time. A recording only knows bucket granularity,
// so re-bucketing can merge recorded buckets but never split one.
#pragma once

#include <string>

#include "tuner/workload.h"

namespace ddpscope::tuner {

// Throws WorkloadError ("<path>: ...") when the run has no detectable iterations.
Workload workload_from_run(const std::string& path);

}  // namespace ddpscope::tuner
