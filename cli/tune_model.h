// `ddpscope tune --backend model`: predicted sweeps from the cost model
// (tuner/model/), side by side with measured ones and the error between them.
#pragma once

#include <vector>

#include "cli/tune_flow.h"
#include "tuner/workload.h"

namespace CLI {
class App;
}

namespace ddpscope::cli {

// Declares --calibration, --calibrate, --gpu, --nccl-tuner-config on `tune`.
void add_model_options(CLI::App* tune, TuneArgs& a);

bool is_model_backend(const std::string& name);  // "model"
// True when the sweep asks for predictions or a calibration.
bool uses_model(const TuneArgs& a);

// Measures what is to be measured (through measure_sweep), calibrates if
// asked, predicts, prints and writes everything. Returns the exit status.
int run_model_tune(TuneArgs& a, const tuner::Workload& w);

}  // namespace ddpscope::cli
