// `report --kineto DIR`: the run as PyTorch profiler traces, one JSON file
// per rank in the layout libkineto writes and HTA (Holistic Trace Analysis)
// reads: `distributedInfo` with the rank, GPU kernels on their device and
// stream, each with the correlation id of a `cuda_runtime` launch on the host,
// NCCL collectives with Kineto's collective arguments, and `ProfilerStep#N`
// spans from the analysis's iterations. docs/trace.md says what each event is
// made from and what ddpscope does not record (when a compute kernel was
// launched, and from which thread).
#pragma once

#include <ostream>
#include <string>

#include "reports/renderer.h"

namespace ddpscope::reports {

// The trace of `rank` in `dir`: HTA reads every .json and .gz file in a
// directory as a trace and takes its rank from `distributedInfo`, so the name
// only has to be ours to find again.
std::string kineto_file(const std::string& dir, int rank);

// Throws InputError naming `dir` when it cannot take the traces: empty, not a
// directory, no way to create it, not writable, or holding a trace that is
// not one of ours (a .json or .gz file not named rank-<N>.json), which HTA
// would read as one more rank. Commands call it before their work; the
// renderer calls it again and creates the directory.
void check_kineto_dir(const std::string& dir);

namespace kineto {

// One rank's trace, streamed to `os`; times count from `origin_ns` (the
// run's earliest event, trace_events.h), which `baseTimeNanoseconds` gives on
// the wall clock.
void write_rank_trace(const ReportInput& input, const ProcessRecord& process, int64_t origin_ns,
                      std::ostream& os);

}  // namespace kineto
}  // namespace ddpscope::reports
