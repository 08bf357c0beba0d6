// Metrics of tuner results (`ddpscope tune -o DB`): per setting (backend,
// topology, ranks, bucket size), the iteration time, communication and exposed
// communication of every measured iteration. One RunMetrics per tune run, so
// a database that several `tune -o` calls appended to holds repeated runs.
#pragma once

#include <vector>

#include "profiler/regression/metrics.h"
#include "profiler/store/reader.h"

namespace ddpscope::regression {

std::vector<RunMetrics> tuned_metrics(store::RunReader& reader);

}  // namespace ddpscope::regression
