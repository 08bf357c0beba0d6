// The CUDA driver and NCCL, loaded at run time for the NCCL backend.
//
// Why not link them: a ddpscope built on a machine with the CUDA toolkit would
// then not start at all where libcudart or libnccl is not on the loader's path,
// which is every machine whose NCCL came in PyTorch's wheel
// (site-packages/nvidia/nccl/lib/). The driver (libcuda.so.1) is on the path
// wherever a GPU is; NCCL is found by DDPSCOPE_NCCL_LIBRARY, else its soname.
#pragma once

#include <cuda.h>
#include <nccl.h>

#include <string>

namespace ddpscope::tuner {

// Each entry point is bound under the name, and with the prototype, that a
// program compiled against these headers would use: cuda.h maps some names to
// versioned symbols (cuMemAlloc to cuMemAlloc_v2) whose arguments can differ
// from the unversioned symbol's. One token gives both, so they cannot disagree.
#define DDPSCOPE_RUNTIME_FN(fn) decltype(&::fn) fn = nullptr

struct NcclRuntime {
  DDPSCOPE_RUNTIME_FN(cuInit);
  DDPSCOPE_RUNTIME_FN(cuGetErrorString);
  DDPSCOPE_RUNTIME_FN(cuDeviceGetCount);
  DDPSCOPE_RUNTIME_FN(cuDeviceGet);
  DDPSCOPE_RUNTIME_FN(cuDevicePrimaryCtxRetain);
  DDPSCOPE_RUNTIME_FN(cuDevicePrimaryCtxRelease);
  DDPSCOPE_RUNTIME_FN(cuCtxSetCurrent);
  DDPSCOPE_RUNTIME_FN(cuStreamCreate);
  DDPSCOPE_RUNTIME_FN(cuStreamSynchronize);
  DDPSCOPE_RUNTIME_FN(cuStreamDestroy);
  DDPSCOPE_RUNTIME_FN(cuEventCreate);
  DDPSCOPE_RUNTIME_FN(cuEventRecord);
  DDPSCOPE_RUNTIME_FN(cuEventSynchronize);
  DDPSCOPE_RUNTIME_FN(cuEventElapsedTime);
  DDPSCOPE_RUNTIME_FN(cuEventDestroy);
  DDPSCOPE_RUNTIME_FN(cuMemAlloc);
  DDPSCOPE_RUNTIME_FN(cuMemFree);
  DDPSCOPE_RUNTIME_FN(cuMemsetD8);

  DDPSCOPE_RUNTIME_FN(ncclGetVersion);
  DDPSCOPE_RUNTIME_FN(ncclGetErrorString);
  DDPSCOPE_RUNTIME_FN(ncclGetUniqueId);
  DDPSCOPE_RUNTIME_FN(ncclCommInitRank);
  DDPSCOPE_RUNTIME_FN(ncclCommDestroy);
  DDPSCOPE_RUNTIME_FN(ncclAllReduce);

  std::string nccl_path;  // the file NCCL was loaded from
};

#undef DDPSCOPE_RUNTIME_FN

// Loads NCCL, then the driver, and initialises the driver. The runtime is
// loaded once per process and kept (the libraries are never closed: NCCL's
// threads outlive a communicator). nullptr with `error` set, starting with
// "no NCCL: ", "no CUDA driver: " or "no CUDA device: ", where one is missing.
const NcclRuntime* load_nccl_runtime(std::string* error);

// "cuMemAlloc: out of memory": what a failed driver call says.
std::string driver_error(const NcclRuntime& rt, CUresult r, const char* what);

}  // namespace ddpscope::tuner
