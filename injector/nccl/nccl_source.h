// NCCL as a capture source (injector/runtime/source.h): its hooks write the
// runtime's communication events (comm_events.h) under this id.
#pragma once

#include "injector/runtime/comm_events.h"
#include "injector/runtime/source.h"

namespace ddpscope::inject::nccl {

inline SourceId source() {
  static const SourceId id = register_source({"nccl", convert_comm_event});
  return id;
}

}  // namespace ddpscope::inject::nccl
