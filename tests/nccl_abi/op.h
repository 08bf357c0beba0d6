// Operations: one rank's validated call (Request), the operation its matching calls on
// the other ranks form (Op), and issue/wait, which match them up and run them.
//
// Matching: the i-th collective call of every rank of a communicator is one collective;
// the i-th ncclSend from rank s to rank r pairs with the i-th ncclRecv on r from s. A
// call registers its buffers and returns a Ticket; the LAST contribution to arrive runs
// the whole operation on the issuing thread (writing every rank's output), then wakes
// the others. Because issuing never blocks, one thread can issue every rank's share
// inside a group and then wait for all of them.
#pragma once

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "comm.h"
#include "injector/nccl/nccl_abi.h"

namespace ddpscope::testnccl {

enum class Kind {
  kAllReduce,
  kBroadcast,
  kReduce,
  kAllGather,
  kReduceScatter,
  kAlltoAll,
  kGather,
  kScatter,
  kSplit,
  kSend,
  kRecv,
};

// Bytes per element. As in NCCL 2.28, values past ncclFloat8e5m2 are no
// datatype (0) -- unless DDPSCOPE_TESTNCCL_NEWER_DTYPE=1, which plays a newer
// NCCL with one more datatype: value 12, one byte per element (copied by
// every op; reductions refuse it, as they refuse other types they cannot add).
inline size_t element_size(int dtype) {
  static const bool newer = [] {
    const char* v = std::getenv("DDPSCOPE_TESTNCCL_NEWER_DTYPE");
    return v && std::string(v) == "1";
  }();
  if (newer && dtype == 12) return 1;
  return nccl::dtype_size(dtype);
}

inline bool is_p2p(Kind k) { return k == Kind::kSend || k == Kind::kRecv; }

inline bool reduces(Kind k) {
  return k == Kind::kAllReduce || k == Kind::kReduce || k == Kind::kReduceScatter;
}

inline bool rooted(Kind k) {
  return k == Kind::kBroadcast || k == Kind::kReduce || k == Kind::kGather || k == Kind::kScatter;
}

// One rank's call, already validated by the API layer.
struct Request {
  Kind kind = Kind::kAllReduce;
  ncclComm* comm = nullptr;
  const void* send = nullptr;
  void* recv = nullptr;
  size_t count = 0;  // as passed: per rank (all-gather, reduce-scatter), per peer (all-to-all)
  // Datatype and op as plain ints: a caller may pass any int, and loading an out-of-range
  // value through the C++ enum type would be undefined behaviour.
  int dtype = ncclInt8;
  int op = ncclSum;
  int root = 0;  // root of rooted collectives, peer of send/recv
  // ncclCommSplit only.
  int color = 0;
  int key = 0;
  ncclComm_t* newcomm = nullptr;
  // Non-blocking split: the handle already returned (ncclInProgress), which the
  // split fills in when it completes, instead of writing *newcomm.
  ncclComm* placeholder = nullptr;
  int device = 0;  // the caller's device, copied so the executor never reads other handles
};

// An operation being assembled from its contributions; guarded by its CommShared::mu
// until `arrived == expected`, after which only the executing thread touches it.
struct Op {
  Request first;               // the first contribution: what the others must agree with
  std::vector<Request> parts;  // by rank; for send/recv [0] is the send, [1] the recv
  int arrived = 0;
  ncclResult_t result = ncclSuccess;
  bool done = false;
};

struct Ticket {
  std::shared_ptr<CommShared> shared;
  std::shared_ptr<Op> op;
  ncclResult_t error = ncclSuccess;  // the call failed before it was registered
};

// Registers req (runs the operation if it is the last contribution). Never blocks.
Ticket issue(const Request& req);

// Blocks until the operation ran (or the communicator was aborted); its result.
ncclResult_t wait(const Ticket& ticket);

// Runs a complete operation: moves the data between every rank's buffers.
ncclResult_t execute(const Op& op);

}  // namespace ddpscope::testnccl
