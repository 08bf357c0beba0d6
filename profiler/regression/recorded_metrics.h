// Metrics of a recorded run (`ddpscope record`): communication and exposed
// communication per iteration, the time of each DDP bucket, and bus bandwidth
// per collective size class, with every sample, as analyze_run defines them.
#pragma once

#include "profiler/regression/metrics.h"
#include "profiler/store/reader.h"

namespace ddpscope::regression {

// Throws InputError when the run has collectives but no DDP iterations.
RunMetrics recorded_metrics(store::RunReader& reader);

}  // namespace ddpscope::regression
