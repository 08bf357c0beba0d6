// ncclGroupStart/End bookkeeping. Inside a group NCCL only enqueues: the
// kernels launch at the outermost ncclGroupEnd. So grouped calls are held in a
// small per-thread list and emitted there, sharing one device timer per stream
// that brackets the real ncclGroupEnd.
#pragma once

#include <cstdint>

#include "injector/runtime/comm_events.h"
#include "injector/runtime/comm_registry.h"

namespace ddpscope::inject::nccl {

// 0 outside a group; the group's id (process-unique, > 0) inside one.
uint64_t current_group();

void group_started();
// Emits the held calls; `launch` runs the real ncclGroupEnd between the timers.
template <typename Fn>
auto group_ended(Fn&& launch);

// Ends the group without emitting: ncclGroupSimulateEnd launches nothing.
template <typename Fn>
auto group_simulated(Fn&& simulate);

// Holds a grouped call until the group ends; false if the list is full (then the
// caller emits it at once, host-timed). Its seq is taken when the group
// launches, so a simulated group's calls take none.
bool hold_in_group(const CollectiveEvent& e, CommInfo* comm);

// Plumbing for group_ended: returns true when this ends the outermost group.
bool leave_group();
void begin_group_timers();
void end_group_timers_and_emit();
void discard_group();

template <typename Fn>
auto group_ended(Fn&& launch) {
  bool outermost = leave_group();
  if (outermost) begin_group_timers();
  auto rc = launch();
  if (outermost) end_group_timers_and_emit();
  return rc;
}

template <typename Fn>
auto group_simulated(Fn&& simulate) {
  bool outermost = leave_group();
  auto rc = simulate();
  if (outermost) discard_group();
  return rc;
}

// Writes one collective event into this thread's ring; false if it was full.
bool emit(const CollectiveEvent& e);

}  // namespace ddpscope::inject::nccl
