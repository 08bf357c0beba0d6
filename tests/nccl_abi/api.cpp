// The exported NCCL C ABI. Like NCCL >= 2.16, every entry point is a strong pnccl<Name>
// plus a weak alias nccl<Name>: a profiler can interpose nccl<Name> and still reach the
// implementation through pnccl<Name>. Entry points never call each other through the
// exported names, so an interposed nccl<Name> sees exactly the application's calls.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "comm.h"
#include "config.h"
#include "group.h"
#include "injector/nccl/nccl_abi.h"
#include "op.h"
#include "profiler_host.h"
#include "reduce.h"
#include "sim_info.h"

#define DDPSCOPE_API extern "C" __attribute__((visibility("default")))
#define DDPSCOPE_WEAK_ALIAS(ret, name, params) \
  DDPSCOPE_API __attribute__((weak, alias("p" #name))) ret name params;

using namespace ddpscope::testnccl;

namespace {

constexpr int kVersion = 22809;  // NCCL 2.28.9, in NCCL_VERSION_CODE's encoding

thread_local std::string t_last_error;

// Records why a call failed (ncclGetLastError) and, inside a group, fails the group.
ncclResult_t reject(ncclResult_t code, const char* why) {
  t_last_error = why;
  note_group_error(code);
  return code;
}

// As NCCL's ncclCommEnsureReady: a communicator still being made (a
// non-blocking split that has not completed) may not be used or queried yet.
ncclResult_t check_ready(const ncclComm* c) {
  if (c->async_error == ncclInProgress) {
    return reject(ncclInvalidArgument,
                  "Attempt to use communicator before the previous operation returned ncclSuccess");
  }
  return ncclSuccess;
}

ncclResult_t check_comm(const ncclComm* c) {
  if (!is_comm(c)) return reject(ncclInvalidArgument, "invalid communicator");
  if (c->finalized) return reject(ncclInvalidUsage, "communicator was finalized");
  if (ncclResult_t r = check_ready(c)) return r;
  if (c->async_error != ncclSuccess) {
    return reject(c->async_error, "communicator failed to initialize");
  }
  return ncclSuccess;
}

// How many count-sized blocks this rank reads and writes; 0 where NCCL ignores the buffer
// (e.g. recvbuff on non-root ranks of a reduce).
std::pair<size_t, size_t> blocks(const Request& r) {
  const size_t n = static_cast<size_t>(r.comm->nranks);
  const bool root = r.comm->rank == r.root;
  switch (r.kind) {
    case Kind::kAllReduce:
      return {1, 1};
    case Kind::kBroadcast:
      return {root ? 1 : 0, 1};
    case Kind::kReduce:
      return {1, root ? 1 : 0};
    case Kind::kAllGather:
      return {1, n};
    case Kind::kReduceScatter:
      return {n, 1};
    case Kind::kAlltoAll:
      return {n, n};
    case Kind::kGather:
      return {1, root ? n : 0};
    case Kind::kScatter:
      return {root ? n : 0, 1};
    case Kind::kSend:
      return {1, 0};
    case Kind::kRecv:
      return {0, 1};
    case Kind::kSplit:
      return {0, 0};
  }
  return {0, 0};
}

// Validates one rank's call, then runs it (or queues it inside a group; or,
// `wait` false, only registers it).
ncclResult_t enqueue(Request req, bool wait = true) {
  if (ncclResult_t r = check_comm(req.comm)) return r;
  const size_t size = element_size(req.dtype);
  if (size == 0) return reject(ncclInvalidArgument, "invalid datatype");
  if (reduces(req.kind) && !valid_op(req.op)) return reject(ncclInvalidArgument, "invalid op");
  if (reduces(req.kind) && ddpscope::nccl::dtype_size(req.dtype) == 0) {
    return reject(ncclInvalidArgument, "no reduction for this datatype");  // the newer one
  }
  if ((rooted(req.kind) || is_p2p(req.kind)) && (req.root < 0 || req.root >= req.comm->nranks)) {
    return reject(ncclInvalidArgument, is_p2p(req.kind) ? "invalid peer" : "invalid root");
  }
  const auto [send_blocks, recv_blocks] = blocks(req);
  const size_t most = std::max(send_blocks, recv_blocks);
  if (most != 0 && req.count > SIZE_MAX / (most * size)) {
    return reject(ncclInvalidArgument, "count too large");
  }
  if (req.count != 0 && ((send_blocks != 0 && !req.send) || (recv_blocks != 0 && !req.recv))) {
    return reject(ncclInvalidArgument, "null buffer");
  }
  req.device = req.comm->device;
  return submit(req, wait);
}

Request make(Kind kind, ncclComm_t comm, const void* send, void* recv, size_t count,
             ncclDataType_t dtype, ncclRedOp_t op = ncclSum, int root = 0) {
  // Read the enums' bits as ints (see Request::dtype).
  int dtype_bits;
  int op_bits;
  static_assert(sizeof dtype_bits == sizeof dtype && sizeof op_bits == sizeof op);
  std::memcpy(&dtype_bits, &dtype, sizeof dtype_bits);
  std::memcpy(&op_bits, &op, sizeof op_bits);
  Request r;
  r.kind = kind;
  r.comm = comm;
  r.send = send;
  r.recv = recv;
  r.count = count;
  r.dtype = dtype_bits;
  r.op = op_bits;
  r.root = root;
  return r;
}

ncclResult_t init_rank(ncclComm_t* comm, int nranks, const ncclUniqueId& id, int rank) {
  if (!comm) return reject(ncclInvalidArgument, "comm is null");
  *comm = nullptr;
  if (nranks < 1 || rank < 0 || rank >= nranks) {
    return reject(ncclInvalidArgument, "invalid rank or nranks");
  }
  ncclComm* c = new_unjoined_comm(nranks, rank);
  // Inside a group the handle is returned at once and joins at ncclGroupEnd.
  if (ncclResult_t r = submit_init(c, id)) {
    destroy_comm(c, /*abort=*/false);
    return reject(r, "communicator rendezvous failed (nranks or rank mismatch)");
  }
  *comm = c;
  profiler_comm_init(c);  // joined already unless inside a group (then: at first use)
  return ncclSuccess;
}

}  // namespace

DDPSCOPE_API ncclResult_t pncclGetVersion(int* version) {
  if (!version) return reject(ncclInvalidArgument, "version is null");
  *version = kVersion;
  return ncclSuccess;
}
DDPSCOPE_WEAK_ALIAS(ncclResult_t, ncclGetVersion, (int* version))

DDPSCOPE_API ncclResult_t pncclGetUniqueId(ncclUniqueId* id) {
  if (!id) return reject(ncclInvalidArgument, "id is null");
  make_unique_id(id);
  return ncclSuccess;
}
DDPSCOPE_WEAK_ALIAS(ncclResult_t, ncclGetUniqueId, (ncclUniqueId * id))

DDPSCOPE_API const char* pncclGetErrorString(ncclResult_t result) {
  switch (result) {
    case ncclSuccess:
      return "no error";
    case ncclUnhandledCudaError:
      return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
    case ncclSystemError:
      return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
    case ncclInternalError:
      return "internal error - please report this issue to the NCCL developers";
    case ncclInvalidArgument:
      return "invalid argument (run with NCCL_DEBUG=WARN for details)";
    case ncclInvalidUsage:
      return "invalid usage (run with NCCL_DEBUG=WARN for details)";
    case ncclRemoteError:
      return "remote process exited or there was a network error";
    case ncclInProgress:
      return "NCCL operation in progress";
  }
  return "unknown result code";
}
DDPSCOPE_WEAK_ALIAS(const char*, ncclGetErrorString, (ncclResult_t result))

// The calling thread's last error message, whatever the communicator.
DDPSCOPE_API const char* pncclGetLastError(ncclComm_t comm) { return t_last_error.c_str(); }
DDPSCOPE_WEAK_ALIAS(const char*, ncclGetLastError, (ncclComm_t comm))

DDPSCOPE_API ncclResult_t pncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId commId,
                                            int rank) {
  return init_rank(comm, nranks, commId, rank);
}
DDPSCOPE_WEAK_ALIAS(ncclResult_t, ncclCommInitRank,
                    (ncclComm_t * comm, int nranks, ncclUniqueId commId, int rank))

DDPSCOPE_API ncclResult_t pncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId commId,
                                                  int rank, ncclConfig_t* config) {
  return init_rank(comm, nranks, commId, rank);  // config (blocking, CTAs, ...) is moot here
}
DDPSCOPE_WEAK_ALIAS(ncclResult_t, ncclCommInitRankConfig,
                    (ncclComm_t * comm, int nranks, ncclUniqueId commId, int rank,
                     ncclConfig_t* config))

DDPSCOPE_API ncclResult_t pncclCommInitAll(ncclComm_t* comms, int ndev, const int* devlist) {
  if (!comms) return reject(ncclInvalidArgument, "comms is null");
  if (ndev < 1) return reject(ncclInvalidArgument, "invalid ndev");
  std::vector<int> devices(ndev);
  for (int i = 0; i < ndev; ++i) {
    devices[i] = devlist ? devlist[i] : i;
    if (devices[i] < 0) return reject(ncclInvalidArgument, "invalid device");
    for (int j = 0; j < i; ++j) {
      if (devices[j] == devices[i]) return reject(ncclInvalidUsage, "duplicate device");
    }
  }
  const std::vector<ncclComm*> made = make_comm_group(devices);
  for (int i = 0; i < ndev; ++i) comms[i] = made[i];
  return ncclSuccess;
}
DDPSCOPE_WEAK_ALIAS(ncclResult_t, ncclCommInitAll,
                    (ncclComm_t * comms, int ndev, const int* devlist))

DDPSCOPE_API ncclResult_t pncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm,
                                         ncclConfig_t* config) {
  if (ncclResult_t r = check_comm(comm)) return r;
  if (!newcomm) return reject(ncclInvalidArgument, "newcomm is null");
  if (color < DDPSCOPE_NCCL_SPLIT_NOCOLOR) return reject(ncclInvalidArgument, "invalid color");
  Request req = make(Kind::kSplit, comm, nullptr, nullptr, 0, ncclInt8);
  req.color = color;
  req.key = key;
  req.newcomm = newcomm;
  if (!nonblocking(config) || in_group()) return enqueue(req);
  // Non-blocking (config.blocking = 0): the handle comes back at once, in
  // progress until every rank has called; ncclCommGetAsyncError says when.
  if (color == DDPSCOPE_NCCL_SPLIT_NOCOLOR) {
    *newcomm = nullptr;
    return enqueue(req, false);
  }
  auto* placeholder = new ncclComm;
  placeholder->rank = -1;
  placeholder->nranks = 0;
  placeholder->device = comm->device;
  placeholder->async_error = ncclInProgress;
  req.placeholder = placeholder;
  *newcomm = placeholder;
  if (ncclResult_t r = enqueue(req, false)) {
    *newcomm = nullptr;
    delete placeholder;
    return r;
  }
  return ncclInProgress;
}
DDPSCOPE_WEAK_ALIAS(ncclResult_t, ncclCommSplit,
                    (ncclComm_t comm, int color, int key, ncclComm_t* newcomm,
                     ncclConfig_t* config))

// Operations complete before their call returns, so finalizing has nothing to flush; it
// only forbids further operations.
DDPSCOPE_API ncclResult_t pncclCommFinalize(ncclComm_t comm) {
  if (!is_comm(comm)) return reject(ncclInvalidArgument, "invalid communicator");
  comm->finalized = true;
  return ncclSuccess;
}
DDPSCOPE_WEAK_ALIAS(ncclResult_t, ncclCommFinalize, (ncclComm_t comm))

// NCCL accepts a null communicator in destroy and abort, as a no-op.
DDPSCOPE_API ncclResult_t pncclCommDestroy(ncclComm_t comm) {
  if (!comm) return ncclSuccess;
  if (!is_comm(comm)) return reject(ncclInvalidArgument, "invalid communicator");
  profiler_comm_end(comm);
  destroy_comm(comm, /*abort=*/false);
  return ncclSuccess;
}
DDPSCOPE_WEAK_ALIAS(ncclResult_t, ncclCommDestroy, (ncclComm_t comm))

DDPSCOPE_API ncclResult_t pncclCommAbort(ncclComm_t comm) {
  if (!comm) return ncclSuccess;
  if (!is_comm(comm)) return reject(ncclInvalidArgument, "invalid communicator");
  profiler_comm_end(comm);
  destroy_comm(comm, /*abort=*/true);
  return ncclSuccess;
}
DDPSCOPE_WEAK_ALIAS(ncclResult_t, ncclCommAbort, (ncclComm_t comm))

DDPSCOPE_API ncclResult_t pncclCommCount(const ncclComm_t comm, int* count) {
  if (!is_comm(comm) || !count) return reject(ncclInvalidArgument, "invalid argument");
  if (ncclResult_t r = check_ready(comm)) return r;
  *count = comm->nranks;
  return ncclSuccess;
}
DDPSCOPE_WEAK_ALIAS(ncclResult_t, ncclCommCount, (const ncclComm_t comm, int* count))

DDPSCOPE_API ncclResult_t pncclCommCuDevice(const ncclComm_t comm, int* device) {
  if (!is_comm(comm) || !device) return reject(ncclInvalidArgument, "invalid argument");
  if (ncclResult_t r = check_ready(comm)) return r;
  *device = comm->device;
  return ncclSuccess;
}
DDPSCOPE_WEAK_ALIAS(ncclResult_t, ncclCommCuDevice, (const ncclComm_t comm, int* device))

DDPSCOPE_API ncclResult_t pncclCommUserRank(const ncclComm_t comm, int* rank) {
  if (!is_comm(comm) || !rank) return reject(ncclInvalidArgument, "invalid argument");
  if (ncclResult_t r = check_ready(comm)) return r;
  *rank = comm->rank;
  return ncclSuccess;
}
DDPSCOPE_WEAK_ALIAS(ncclResult_t, ncclCommUserRank, (const ncclComm_t comm, int* rank))

DDPSCOPE_API ncclResult_t pncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* asyncError) {
  if (!is_comm(comm) || !asyncError) return reject(ncclInvalidArgument, "invalid argument");
  *asyncError = comm->async_error;
  if (*asyncError == ncclSuccess && comm->shared) {
    std::lock_guard<std::mutex> lock(comm->shared->mu);
    if (comm->shared->aborted) *asyncError = ncclRemoteError;  // a peer aborted
  }
  return ncclSuccess;
}
DDPSCOPE_WEAK_ALIAS(ncclResult_t, ncclCommGetAsyncError,
                    (ncclComm_t comm, ncclResult_t* asyncError))

DDPSCOPE_API ncclResult_t pncclAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                                         ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                                         cudaStream_t stream) {
  return enqueue(make(Kind::kAllReduce, comm, sendbuff, recvbuff, count, datatype, op));
}
DDPSCOPE_WEAK_ALIAS(ncclResult_t, ncclAllReduce,
                    (const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                     ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream))

DDPSCOPE_API ncclResult_t pncclBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                                         ncclDataType_t datatype, int root, ncclComm_t comm,
                                         cudaStream_t stream) {
  return enqueue(make(Kind::kBroadcast, comm, sendbuff, recvbuff, count, datatype, ncclSum, root));
}
DDPSCOPE_WEAK_ALIAS(ncclResult_t, ncclBroadcast,
                    (const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                     int root, ncclComm_t comm, cudaStream_t stream))

// The legacy in-place broadcast.
DDPSCOPE_API ncclResult_t pncclBcast(void* buff, size_t count, ncclDataType_t datatype, int root,
                                     ncclComm_t comm, cudaStream_t stream) {
  return enqueue(make(Kind::kBroadcast, comm, buff, buff, count, datatype, ncclSum, root));
}
DDPSCOPE_WEAK_ALIAS(ncclResult_t, ncclBcast,
                    (void* buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
                     cudaStream_t stream))

DDPSCOPE_API ncclResult_t pncclReduce(const void* sendbuff, void* recvbuff, size_t count,
                                      ncclDataType_t datatype, ncclRedOp_t op, int root,
                                      ncclComm_t comm, cudaStream_t stream) {
  return enqueue(make(Kind::kReduce, comm, sendbuff, recvbuff, count, datatype, op, root));
}
DDPSCOPE_WEAK_ALIAS(ncclResult_t, ncclReduce,
                    (const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                     ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream))

DDPSCOPE_API ncclResult_t pncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                                         ncclDataType_t datatype, ncclComm_t comm,
                                         cudaStream_t stream) {
  return enqueue(make(Kind::kAllGather, comm, sendbuff, recvbuff, sendcount, datatype));
}
DDPSCOPE_WEAK_ALIAS(ncclResult_t, ncclAllGather,
                    (const void* sendbuff, void* recvbuff, size_t sendcount,
                     ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream))

DDPSCOPE_API ncclResult_t pncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                                             ncclDataType_t datatype, ncclRedOp_t op,
                                             ncclComm_t comm, cudaStream_t stream) {
  return enqueue(make(Kind::kReduceScatter, comm, sendbuff, recvbuff, recvcount, datatype, op));
}
DDPSCOPE_WEAK_ALIAS(ncclResult_t, ncclReduceScatter,
                    (const void* sendbuff, void* recvbuff, size_t recvcount,
                     ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream))

DDPSCOPE_API ncclResult_t pncclAlltoAll(const void* sendbuff, void* recvbuff, size_t count,
                                        ncclDataType_t datatype, ncclComm_t comm,
                                        cudaStream_t stream) {
  return enqueue(make(Kind::kAlltoAll, comm, sendbuff, recvbuff, count, datatype));
}
DDPSCOPE_WEAK_ALIAS(ncclResult_t, ncclAlltoAll,
                    (const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                     ncclComm_t comm, cudaStream_t stream))

DDPSCOPE_API ncclResult_t pncclGather(const void* sendbuff, void* recvbuff, size_t count,
                                      ncclDataType_t datatype, int root, ncclComm_t comm,
                                      cudaStream_t stream) {
  return enqueue(make(Kind::kGather, comm, sendbuff, recvbuff, count, datatype, ncclSum, root));
}
DDPSCOPE_WEAK_ALIAS(ncclResult_t, ncclGather,
                    (const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                     int root, ncclComm_t comm, cudaStream_t stream))

DDPSCOPE_API ncclResult_t pncclScatter(const void* sendbuff, void* recvbuff, size_t count,
                                       ncclDataType_t datatype, int root, ncclComm_t comm,
                                       cudaStream_t stream) {
  return enqueue(make(Kind::kScatter, comm, sendbuff, recvbuff, count, datatype, ncclSum, root));
}
DDPSCOPE_WEAK_ALIAS(ncclResult_t, ncclScatter,
                    (const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                     int root, ncclComm_t comm, cudaStream_t stream))

DDPSCOPE_API ncclResult_t pncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype,
                                    int peer, ncclComm_t comm, cudaStream_t stream) {
  return enqueue(make(Kind::kSend, comm, sendbuff, nullptr, count, datatype, ncclSum, peer));
}
DDPSCOPE_WEAK_ALIAS(ncclResult_t, ncclSend,
                    (const void* sendbuff, size_t count, ncclDataType_t datatype, int peer,
                     ncclComm_t comm, cudaStream_t stream))

DDPSCOPE_API ncclResult_t pncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype, int peer,
                                    ncclComm_t comm, cudaStream_t stream) {
  return enqueue(make(Kind::kRecv, comm, nullptr, recvbuff, count, datatype, ncclSum, peer));
}
DDPSCOPE_WEAK_ALIAS(ncclResult_t, ncclRecv,
                    (void* recvbuff, size_t count, ncclDataType_t datatype, int peer,
                     ncclComm_t comm, cudaStream_t stream))

DDPSCOPE_API ncclResult_t pncclGroupStart() { return group_start(); }
DDPSCOPE_WEAK_ALIAS(ncclResult_t, ncclGroupStart, ())

DDPSCOPE_API ncclResult_t pncclGroupEnd() {
  const ncclResult_t r = group_end();
  if (r != ncclSuccess) t_last_error = "group failed";
  return r;
}
DDPSCOPE_WEAK_ALIAS(ncclResult_t, ncclGroupEnd, ())

// As NCCL: without a simInfo it is ncclGroupEnd. With one, the group ends (its
// depth drops even when simInfo is refused); at the outermost level its
// operations are estimated into simInfo, never run.
DDPSCOPE_API ncclResult_t pncclGroupSimulateEnd(ncclSimInfo_t* simInfo) {
  if (!simInfo) return pncclGroupEnd();
  auto* info = reinterpret_cast<SimInfo*>(simInfo);
  float estimated = info->estimatedTime;
  const ncclResult_t r = group_simulate_end(info->magic == kSimInfoMagic, &estimated);
  if (r != ncclSuccess) {
    t_last_error = "group failed";
    return r;
  }
  info->estimatedTime = estimated;
  return ncclSuccess;
}
DDPSCOPE_WEAK_ALIAS(ncclResult_t, ncclGroupSimulateEnd, (ncclSimInfo_t * simInfo))
