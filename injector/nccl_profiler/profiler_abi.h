// NCCL's profiler-plugin ABI, versions 5 and 4, declared here so the plugin
// builds without NCCL's headers (as injector/nccl/nccl_abi.h does for NCCL's
// API). NCCL dlopen()s NCCL_PROFILER_PLUGIN and dlsym()s "ncclProfiler_v6",
// then "ncclProfiler_v5", "ncclProfiler_v4", ...: the first found is used.
// v5 appeared in NCCL 2.28 (which current torch wheels ship), v4 in 2.27;
// NCCL 2.29+ asks for v6 first, then takes our v5.
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

struct EventDescrV5 {
  uint64_t type;
  void* parentObj;
  int rank;
  union {
    struct {
      bool graphCaptured;
      int groupDepth;
    } groupApi;
    struct {
      const char* func;
      size_t count;
      const char* datatype;
      int root;
      void* stream;
      bool graphCaptured;
    } collApi;
    struct {
      const char* func;
      size_t count;
      const char* datatype;
      void* stream;
      bool graphCaptured;
    } p2pApi;
    struct {
      void* stream;
    } kernelLaunch;
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
static_assert(offsetof(CollDescrV4, nChannels) == 56 && sizeof(CollDescrV4) == 80);
static_assert(offsetof(ProxyOpDescr, channelId) == 4 && offsetof(ProxyOpDescr, isSend) == 20);
static_assert(offsetof(KernelChDescr, pTimer) == 8);
}  // namespace ddpscope::inject::nccl_profiler
