// Why a topology cannot be emulated. Two kinds, because `ddpscope tune` treats
// them differently: a machine or user that cannot emulate at all (not root, no
// `ip`) is bad usage, exit 2; a step that failed on the way is a runtime
// failure, exit 1. Both carry one line.
#pragma once

#include <stdexcept>

#include "profiler/core/input_error.h"

namespace ddpscope::tuner::emulation {

struct EmulationError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Bad usage (--topology where it cannot be emulated): an InputError, exit 2.
struct EmulationUnavailable : InputError {
  using InputError::InputError;
};

}  // namespace ddpscope::tuner::emulation
