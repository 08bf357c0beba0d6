// Measuring a calibration on this machine with a real backend, through the
// same launcher and workers as a measured sweep: synthetic workloads whose
// replays isolate what the cost model needs.
#pragma once

#include <string>

#include "cli/tune_flow.h"
#include "tuner/model/calibration.h"
#include "tuner/topology.h"

namespace ddpscope::cli {

// 1. Back-to-back all-reduces at five bucket sizes (1/4 to 64 MiB), no
//    compute: the fit of α and β (a ring folds γ into β).
// 2. Short compute steps and one tiny bucket, alone and beside an 8 MiB
//    all-reduce: how late a step ends on the slowest rank (the step delay),
//    and how much later while communication runs.
// The communication rate under compute follows from ranks and cores.
// Runs on `a.nproc` ranks of `backend` on `topology` (a's --topology, as
// parsed by the caller); throws std::runtime_error if the ranks fail,
// std::invalid_argument if the fit is impossible.
tuner::model::Calibration measure_calibration(const TuneArgs& a, const std::string& backend,
                                              const tuner::Topology& topology);

}  // namespace ddpscope::cli
