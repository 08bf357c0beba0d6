// A workload from a recorded run. Where the run holds DDP's own account of
// itself (ddp_info, written by record's Python start-up hook), the workload is
// the reducer's real parameters in their gradient-ready order with that DDP's
// bucketing rules (Workload::ddp), so re-bucketing at another cap gives the
// buckets DDP builds there. Otherwise it falls back to DDP's buckets as the
// analysis found them in the all-reduce pattern, each replayed as one gradient
// of its recorded size, which can merge recorded buckets but never split one.
// Workload::source says which. Times come from the analysis in both cases.
#pragma once

#include <string>

#include "tuner/workload.h"

namespace ddpscope::tuner {

// Throws InputError ("<path>: ...") when the run has no detectable
// iterations, or DDP's account in it does not parse.
Workload workload_from_run(const std::string& path);

}  // namespace ddpscope::tuner
