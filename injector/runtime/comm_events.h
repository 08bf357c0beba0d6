// The communication events NCCL's and Gloo's hooks write: collectives and the
// life of communicators. Both sources convert them with convert_comm_event,
// which hands them to the runtime's communication pipeline (Rows::collective,
// comm_begin, comm_end): device timing, kernel linking, communicator rows.
#pragma once

#include <cstdint>

#include "injector/runtime/event.h"
#include "profiler/core/records.h"
#include "profiler/core/vocab.h"

namespace ddpscope::inject {

// collective_begin: a hook entered a collective whose call runs it (Gloo); its
// `collective` event follows when the call returns. Until then the rank file
// lists it in flight (inflight table), so a job stuck inside it says where.
enum class CommEventKind : uint8_t { collective = 1, comm_init, comm_end, collective_begin };

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

class Rows;
void convert_comm_event(const Event& e, Rows& rows);

}  // namespace ddpscope::inject
