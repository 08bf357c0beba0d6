// What the store holds, one struct per table row, times in nanoseconds. The
// injector converts its hot-path events into these off the hot path; readers
// hand the same structs back, so writer and reader cannot drift apart.
#pragma once

#include <cstdint>
#include <string>

#include "profiler/core/vocab.h"

namespace ddpscope {

constexpr int64_t kNoTime = INT64_MIN;  // stored as NULL

struct CollectiveRecord {
  int64_t id = 0;  // row id; assigned by the store
  int32_t rank = 0;
  uint64_t comm_id = 0;
  int32_t comm_rank = -1;
  int32_t nranks = 0;
  uint64_t seq = 0;  // per-communicator call order (NCCL) or the Gloo tag
  Op op = Op::allreduce;
  Dtype dtype = Dtype::unknown;
  RedOp redop = RedOp::none;
  uint64_t count = 0;  // elements as the API counts them
  uint64_t bytes = 0;  // nccl-tests' message size S (docs/schema.md)
  int32_t root = -1;
  int32_t peer = -1;
  uint64_t stream = 0;
  uint32_t tid = 0;
  uint64_t group_id = 0;  // 0: not inside ncclGroupStart/End
  int64_t host_start_ns = kNoTime;
  int64_t host_end_ns = kNoTime;
  int64_t start_ns = kNoTime;
  int64_t end_ns = kNoTime;
  Timing timing = Timing::none;
};

// How a communicator came to be known.
enum class CommOrigin : uint8_t { init_rank, init_rank_config, init_all, split, first_use };
// How its life ended (none: still alive when the process ended).
enum class CommEnd : uint8_t { none, destroy, abort, finalize };

struct CommRecord {
  int32_t rank = 0;
  uint64_t comm_id = 0;
  int32_t nranks = 0;
  int32_t comm_rank = -1;
  int32_t device = -1;
  Backend backend = Backend::unknown;
  uint64_t parent_comm_id = 0;
  CommOrigin origin = CommOrigin::first_use;
  int64_t created_ns = kNoTime;
  int64_t ended_ns = kNoTime;
  CommEnd end = CommEnd::none;
};

struct ProcessRecord {
  int32_t rank = 0;
  int32_t world_size = 0;
  int32_t local_rank = -1;
  std::string host;
  int64_t pid = 0;
  int32_t device = -1;
  Backend backend = Backend::unknown;
  int64_t clock_offset_ns = 0;  // wall-clock ns minus this file's monotonic ns
  uint64_t dropped_events = 0;
  std::string rank_source;  // which variable (or fallback) gave the rank
  int64_t start_ns = kNoTime;
  int64_t end_ns = kNoTime;
};

const char* name_of(CommOrigin origin);
const char* name_of(CommEnd end);
CommOrigin parse_comm_origin(std::string_view name);
CommEnd parse_comm_end(std::string_view name);

}  // namespace ddpscope
