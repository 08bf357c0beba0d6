// The fixed-size POD event a hook writes into its thread's buffer. Times are raw
// ticks (see profiler/core/clock.h); names are enums; nothing here allocates.
#pragma once

#include <cstdint>

#include "profiler/core/records.h"
#include "profiler/core/vocab.h"

namespace ddpscope::inject {

enum class EventKind : uint8_t { collective = 1, comm_init, comm_end };

constexpr uint32_t kNoTimer = UINT32_MAX;

struct CollectiveEvent {
  uint64_t t_start, t_end;  // host API call, ticks
  uint64_t count, bytes;
  uint64_t comm_id, stream, seq, group_id;
  int32_t root, peer, comm_rank, nranks;
  uint32_t tid;
  uint32_t timer;  // CUDA event timer slot, or kNoTimer
  Op op;
  Dtype dtype;
  RedOp redop;
  Backend backend;
};

struct CommInitEvent {
  uint64_t t;
  uint64_t comm_id, parent_comm_id;
  int32_t nranks, comm_rank, device;
  Backend backend;
  CommOrigin origin;
};

struct CommEndEvent {
  uint64_t t;
  uint64_t comm_id;
  int32_t comm_rank;
  CommEnd how;
};

struct Event {
  EventKind kind;
  union {
    CollectiveEvent collective;
    CommInitEvent comm_init;
    CommEndEvent comm_end;
  };
};

static_assert(sizeof(Event) <= 112, "keep events small: they are copied on the hot path");

}  // namespace ddpscope::inject
