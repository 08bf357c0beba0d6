// NCCL's profiler-plugin ABI, versions 6, 5 and 4, declared here so the
// plugin builds without NCCL's headers (as injector/nccl/nccl_abi.h does for
// NCCL's API). NCCL dlopen()s NCCL_PROFILER_PLUGIN and dlsym()s
// "ncclProfiler_v6", then "ncclProfiler_v5", "ncclProfiler_v4", ...: the
// first found is used. v6 came with NCCL 2.29 (copy-engine collectives;
// torch 2.15's wheel pins 2.30), v5 with 2.28, v4 with 2.27.
// Layouts follow NCCL's plugin headers field for field; names are ours.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

namespace ddpscope::inject::nccl_profiler {

// ncclResult_t is an int-sized enum; the plugin only ever answers success.
using Result = int;
constexpr Result kSuccess = 0;

// Event types: bits of the activation mask and the descriptor's `type`.
enum EventType : uint64_t {
  kGroup = 1u << 0,
  kColl = 1u << 1,
  kP2p = 1u << 2,
  kProxyOp = 1u << 3,
  kProxyStep = 1u << 4,
  kProxyCtrl = 1u << 5,
  kKernelCh = 1u << 6,
  kNetPlugin = 1u << 7,
  kGroupApi = 1u << 8,  // v5 API-level events
  kCollApi = 1u << 9,
  kP2pApi = 1u << 10,
  kKernelLaunch = 1u << 11,
  kCeColl = 1u << 12,   // v6: a collective NCCL ran on copy engines (no kernel)
  kCeSync = 1u << 13,   // v6: one of its synchronisations between the ranks
  kCeBatch = 1u << 14,  // v6: one batch of its copies
};

// The states recordEventState reports (ncclProfilerEventState_t; int-sized).
enum EventState : int {
  kStepSendGpuWait = 8,     // send step waits for the GPU to fill the buffer
  kStepSendWait = 9,        // send step posted to the network, waits for completion
  kStepRecvWait = 10,       // recv step posted, waits for data from the network
  kStepRecvFlushWait = 11,  // recv step waits for the GDR flush
  kStepRecvGpuWait = 12,    // recv step waits for the GPU to consume the buffer
  kOpInProgress = 19,       // proxy op began progressing (v4+)
  kStepSendPeerWait = 20,   // send step waits for the peer's clear-to-send (v4+)
  kKernelChStop = 22,
  // 25-30: v6's copy-engine states, which NCCL declares but does not report
  // (it starts and stops its CE events around the work it enqueues).
};

using DebugLogger = void (*)(int level, unsigned long flags, const char* file, int line,
                             const char* fmt, ...);

// The descriptor's event-specific parts shared by v4 and v5 (same layouts).
struct ProxyOpDescr {
  pid_t pid;  // the process that started the parent: its handles are ours only if ours
  uint8_t channelId;
  int peer;
  int nSteps;
  int chunkSize;
  int isSend;
};

struct ProxyStepDescr {
  int step;
};

struct KernelChDescr {
  uint8_t channelId;
  uint64_t pTimer;
};

struct CollDescrV4 {
  uint64_t seqNumber;
  const char* func;
  const void* sendBuff;
  void* recvBuff;
  size_t count;
  int root;
  const char* datatype;
  uint8_t nChannels;
  uint8_t nWarps;
  const char* algo;
  const char* proto;
};

struct P2pDescr {
  const char* func;
  void* buff;
  const char* datatype;
  size_t count;
  int peer;
  uint8_t nChannels;
};

struct NetPluginDescr {
  int64_t id;
  void* data;
};

// v5's API-level events (not requested; declared for the union's layout).
struct GroupApiDescr {
  bool graphCaptured;
  int groupDepth;
};

struct CollApiDescr {
  const char* func;
  size_t count;
  const char* datatype;
  int root;
  void* stream;
  bool graphCaptured;
};

struct P2pApiDescr {
  const char* func;
  size_t count;
  const char* datatype;
  void* stream;
  bool graphCaptured;
};

struct KernelLaunchDescr {
  void* stream;
};

struct EventDescrV5 {
  uint64_t type;
  void* parentObj;
  int rank;
  union {
    GroupApiDescr groupApi;
    CollApiDescr collApi;
    P2pApiDescr p2pApi;
    KernelLaunchDescr kernelLaunch;
    CollDescrV4 coll;  // v5 appends `void* parentGroup`, which we never read
    struct {
      P2pDescr p2p;
      void* parentGroup;
    } p2p;
    ProxyOpDescr proxyOp;
    ProxyStepDescr proxyStep;
    KernelChDescr kernelCh;
    NetPluginDescr netPlugin;
  };
};

// v6: a collective NCCL runs on the copy engines (AllGather, AlltoAll,
// Gather, Scatter over symmetric memory) is no `coll` event: it is a ceColl,
// started before NCCL enqueues its copies and stopped after, with its
// synchronisations and copy batches as children. Its seqNumber is NCCL's
// copy-engine sequence (bumped per synchronisation), not the per-function
// count a `coll` carries.
struct CeCollDescr {
  uint64_t seqNumber;
  const char* func;
  const void* sendBuff;
  void* recvBuff;
  size_t count;
  int root;
  const char* datatype;
  const char* syncStrategy;  // "MC" (NVLS multicast) or "UC" (unicast)
  bool intraBatchSync;
  uint32_t batchSize;
  uint32_t numBatches;
  uint32_t ceSeqNum;
  void* stream;
};

struct CeSyncDescr {
  bool isComplete;  // the completion barrier (else the ready barrier)
  int nRanks;
};

struct CeBatchDescr {
  int numOps;
  size_t totalBytes;
  bool useIntraSync;
};

struct EventDescrV6 {
  uint64_t type;
  void* parentObj;
  int rank;
  union {
    GroupApiDescr groupApi;
    CollApiDescr collApi;
    P2pApiDescr p2pApi;
    KernelLaunchDescr kernelLaunch;
    CollDescrV4 coll;
    struct {
      P2pDescr p2p;
      void* parentGroup;
    } p2p;
    ProxyOpDescr proxyOp;
    ProxyStepDescr proxyStep;
    KernelChDescr kernelCh;
    NetPluginDescr netPlugin;
    CeCollDescr ceColl;
    CeSyncDescr ceCollSync;
    CeBatchDescr ceCollBatch;
  };
};

struct EventDescrV4 {
  uint8_t type;
  void* parentObj;
  int rank;
  union {
    CollDescrV4 coll;
    P2pDescr p2p;
    ProxyOpDescr proxyOp;
    ProxyStepDescr proxyStep;
    KernelChDescr kernelCh;
    NetPluginDescr netPlugin;
  };
};

// v4 and v5 share the state arguments.
union EventStateArgs {
  struct {
    size_t transSize;
  } proxyStep;
  struct {
    int appendedProxyOps;
  } proxyCtrl;
  struct {
    void* data;
  } netPlugin;
  struct {
    uint64_t pTimer;
  } kernelCh;
};

// v6 keeps v5's init, state arguments and functions; only the descriptor grew.
struct ProfilerV6 {
  const char* name;
  Result (*init)(void** context, uint64_t commId, int* eActivationMask, const char* commName,
                 int nNodes, int nranks, int rank, DebugLogger logfn);
  Result (*startEvent)(void* context, void** eHandle, EventDescrV6* eDescr);
  Result (*stopEvent)(void* eHandle);
  Result (*recordEventState)(void* eHandle, EventState eState, EventStateArgs* eStateArgs);
  Result (*finalize)(void* context);
};

struct ProfilerV5 {
  const char* name;
  Result (*init)(void** context, uint64_t commId, int* eActivationMask, const char* commName,
                 int nNodes, int nranks, int rank, DebugLogger logfn);
  Result (*startEvent)(void* context, void** eHandle, EventDescrV5* eDescr);
  Result (*stopEvent)(void* eHandle);
  Result (*recordEventState)(void* eHandle, EventState eState, EventStateArgs* eStateArgs);
  Result (*finalize)(void* context);
};

// v4's init takes the name before the hash.
struct ProfilerV4 {
  const char* name;
  Result (*init)(void** context, int* eActivationMask, const char* commName, uint64_t commHash,
                 int nNodes, int nranks, int rank, DebugLogger logfn);
  Result (*startEvent)(void* context, void** eHandle, EventDescrV4* eDescr);
  Result (*stopEvent)(void* eHandle);
  Result (*recordEventState)(void* eHandle, EventState eState, EventStateArgs* eStateArgs);
  Result (*finalize)(void* context);
};

}  // namespace ddpscope::inject::nccl_profiler

namespace ddpscope::inject::nccl_profiler {
// Offsets as NCCL's compiler lays them out (x86-64 and aarch64 Linux).
static_assert(offsetof(EventDescrV5, coll) == 24 && offsetof(EventDescrV4, coll) == 24);
static_assert(offsetof(EventDescrV6, coll) == 24 && offsetof(EventDescrV6, ceColl) == 24);
static_assert(offsetof(CeCollDescr, syncStrategy) == 56 && offsetof(CeCollDescr, batchSize) == 68);
static_assert(offsetof(CeCollDescr, stream) == 80 && sizeof(CeCollDescr) == 88);
static_assert(offsetof(CeSyncDescr, nRanks) == 4 && offsetof(CeBatchDescr, totalBytes) == 8);
static_assert(offsetof(CeBatchDescr, useIntraSync) == 16);
static_assert(offsetof(CollDescrV4, nChannels) == 56 && sizeof(CollDescrV4) == 80);
static_assert(offsetof(ProxyOpDescr, channelId) == 4 && offsetof(ProxyOpDescr, isSend) == 20);
static_assert(offsetof(KernelChDescr, pTimer) == 8);
}  // namespace ddpscope::inject::nccl_profiler
