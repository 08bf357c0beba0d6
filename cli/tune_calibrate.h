// Measuring a calibration on this machine with a real backend, through the
// same launcher and workers as a measured sweep: synthetic workloads whose
// replays isolate what the cost model needs.
#pragma once

#include <string>

#include "cli/tune_flow.h"
#include "tuner/model/calibration.h"

namespace ddpscope::cli {

// 1. Back-to-back all-reduces at five bucket sizes, no compute: the fit of
//    α and β (γ folded into β: one rank count).
// 2. One large bucket launched at the start of a compute interval as long as
//    its fitted time, then a tiny one: how much of the large one finishes
//    under compute gives the communication rate during compute.
// Runs on `a.nproc` ranks of `backend`; throws std::runtime_error if the
// ranks fail, std::invalid_argument if the fit is impossible.
tuner::model::Calibration measure_calibration(const TuneArgs& a, const std::string& backend);

}  // namespace ddpscope::cli
