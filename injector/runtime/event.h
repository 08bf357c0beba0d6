// The fixed-size POD event a hook writes into its thread's buffer. Times are raw
// ticks (see profiler/core/clock.h); names are enums; nothing here allocates.
#pragma once

#include <cstdint>

#include "profiler/core/records.h"
#include "profiler/core/vocab.h"

namespace ddpscope::inject {

enum class EventKind : uint8_t { collective = 1, comm_init, comm_end, range, sync };

constexpr uint32_t kNoTimer = UINT32_MAX;

struct CollectiveEvent {
  uint64_t t_start, t_end;  // host API call, ticks
  uint64_t count, bytes;
  uint64_t comm_id, stream, seq, group_id;
  int32_t root, peer, comm_rank, nranks;
  uint32_t tid;
  uint32_t timer;        // CUDA event timer slot, or kNoTimer
  uint32_t correlation;  // our external correlation id given to CUPTI, or 0
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

// A closed NVTX range (push/pop or start/end); names interned (name_table.h).
struct RangeEvent {
  uint64_t t_start, t_end;
  uint32_t domain, name;  // name-table ids; domain 0 is NVTX's default domain
  uint32_t tid;
};

// A CUDA wait the job made (SyncCall in profiler/core/records.h).
struct SyncEvent {
  uint64_t t_start, t_end;
  uint64_t stream;
  uint32_t tid;
  SyncCall call;
};

struct Event {
  EventKind kind;
  union {
    CollectiveEvent collective;
    CommInitEvent comm_init;
    CommEndEvent comm_end;
    RangeEvent range;
    SyncEvent sync;
  };
};

static_assert(sizeof(Event) <= 112, "keep events small: they are copied on the hot path");

}  // namespace ddpscope::inject
