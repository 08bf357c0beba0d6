// Prototypes of the NCCL entry points ddpscope intercepts, and access to the
// real functions behind them (resolved once, lazily, the robust way: see
// injector/runtime/symbols.h). The hooks themselves live in nccl_collectives.cpp
// and nccl_comms.cpp.
#pragma once

#include <atomic>

#include "injector/nccl/nccl_abi.h"
#include "injector/runtime/log.h"
#include "injector/runtime/symbols.h"

extern "C" {
ncclResult_t ncclAllReduce(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t,
                           cudaStream_t);
ncclResult_t ncclBroadcast(const void*, void*, size_t, ncclDataType_t, int, ncclComm_t,
                           cudaStream_t);
ncclResult_t ncclBcast(void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
ncclResult_t ncclReduce(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, int, ncclComm_t,
                        cudaStream_t);
ncclResult_t ncclAllGather(const void*, void*, size_t, ncclDataType_t, ncclComm_t, cudaStream_t);
ncclResult_t ncclReduceScatter(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t,
                               cudaStream_t);
ncclResult_t ncclAlltoAll(const void*, void*, size_t, ncclDataType_t, ncclComm_t, cudaStream_t);
ncclResult_t ncclGather(const void*, void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
ncclResult_t ncclScatter(const void*, void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
ncclResult_t ncclSend(const void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
ncclResult_t ncclRecv(void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
ncclResult_t ncclGroupStart();
ncclResult_t ncclGroupEnd();
ncclResult_t ncclGroupSimulateEnd(ncclSimInfo_t*);
ncclResult_t ncclCommInitRank(ncclComm_t*, int, ncclUniqueId, int);
ncclResult_t ncclCommInitRankConfig(ncclComm_t*, int, ncclUniqueId, int, ncclConfig_t*);
ncclResult_t ncclCommInitAll(ncclComm_t*, int, const int*);
ncclResult_t ncclCommSplit(ncclComm_t, int, int, ncclComm_t*, ncclConfig_t*);
ncclResult_t ncclCommDestroy(ncclComm_t);
ncclResult_t ncclCommAbort(ncclComm_t);
ncclResult_t ncclCommFinalize(ncclComm_t);
ncclResult_t ncclCommCount(const ncclComm_t, int*);
ncclResult_t ncclCommUserRank(const ncclComm_t, int*);
ncclResult_t ncclCommCuDevice(const ncclComm_t, int*);
ncclResult_t ncclCommGetAsyncError(ncclComm_t, ncclResult_t*);
}

namespace ddpscope::inject::nccl {

// The real `Name`: pnccl<Name> where NCCL exports it (>= 2.16), else nccl<Name>.
// Null only where nothing defines it (symbols.h): the hook answers ncclSystemError.
template <typename Fn>
[[gnu::always_inline]] inline Fn real(std::atomic<void*>& cache, const char* pname,
                                      const char* name, const void* caller) {
  return cached_real<Fn>(cache, [&] {
    return resolve_real(cache, {pname, name}, {"libnccl.so.2", "libnccl.so"}, caller,
                        "ncclSystemError");
  });
}

}  // namespace ddpscope::inject::nccl

// Used in the hook's own body: the caller is the hook's return address.
#define DDPSCOPE_REAL_NCCL(Name)                                                        \
  ([](const void* caller) {                                                             \
    static std::atomic<void*> cache{nullptr};                                           \
    return ::ddpscope::inject::nccl::real<decltype(&nccl##Name)>(cache, "pnccl" #Name,  \
                                                                 "nccl" #Name, caller); \
  }(DDPSCOPE_CALLER()))
