// The flags of `ddpscope tune` that belong to the cost model (cli/tune_model.cpp).
#pragma once

#include <string>

namespace ddpscope::cli {

struct ModelArgs {
  std::string calibration;        // --calibration FILE: read (or, with --calibrate, write)
  bool calibrate = false;         // --calibrate: measure the calibration first
  std::string gpu = "hopper";     // --gpu: NCCL's architecture class for the priors
  std::string nccl_tuner_config;  // --nccl-tuner-config F: the example plugin's CSV
  std::string algorithm;          // --model-algorithm: what-if for a calibrated backend
};

}  // namespace ddpscope::cli
