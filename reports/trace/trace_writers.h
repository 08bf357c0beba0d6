// The two trace formats over the same walk (trace_events.h); the trace
// renderer (trace_format.cpp) picks one. Both stream to `os` and throw
// std::runtime_error on a database error.
#pragma once

#include <ostream>

#include "profiler/analysis/collective_labels.h"
#include "profiler/store/reader.h"

namespace ddpscope::reports::trace {

// `read`, `labels`: the run's collectives and their labels where the
// analysis kept them (walk_run).

// Chrome trace-event JSON (trace_json.cpp).
void write_json_trace(store::RunReader& reader, std::ostream& os,
                      const CollectiveRuns* read = nullptr,
                      const analysis::CollectiveLabels* labels = nullptr);

// Perfetto's own protobuf format, TrackEvent packets (trace_perfetto.cpp).
void write_perfetto_trace(store::RunReader& reader, std::ostream& os,
                          const CollectiveRuns* read = nullptr,
                          const analysis::CollectiveLabels* labels = nullptr);

}  // namespace ddpscope::reports::trace
