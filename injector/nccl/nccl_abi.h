// The slice of NCCL's C ABI that ddpscope needs, declared here so the NCCL hooks
// (and the NCCL-ABI test library) build without nccl.h. Values and layouts follow
// NCCL 2.x; the ABI has been stable for these types since 2.0 (enums are int-sized,
// ncclUniqueId is 128 bytes, handles are opaque pointers). ncclConfig_t is only ever
// passed through by pointer, so it stays opaque (as does ncclSimInfo_t).
#pragma once

#include <cstddef>

extern "C" {

typedef struct ncclComm* ncclComm_t;
typedef struct CUstream_st* cudaStream_t;
typedef struct ncclConfig_opaque ncclConfig_t;
// ncclGroupSimulateEnd's argument (NCCL >= 2.22), passed through by pointer.
typedef struct ncclSimInfo_opaque ncclSimInfo_t;

#define DDPSCOPE_NCCL_UNIQUE_ID_BYTES 128
typedef struct {
  char internal[DDPSCOPE_NCCL_UNIQUE_ID_BYTES];
} ncclUniqueId;

typedef enum {
  ncclSuccess = 0,
  ncclUnhandledCudaError = 1,
  ncclSystemError = 2,
  ncclInternalError = 3,
  ncclInvalidArgument = 4,
  ncclInvalidUsage = 5,
  ncclRemoteError = 6,
  ncclInProgress = 7,
} ncclResult_t;

typedef enum {
  ncclInt8 = 0,
  ncclUint8 = 1,
  ncclInt32 = 2,
  ncclUint32 = 3,
  ncclInt64 = 4,
  ncclUint64 = 5,
  ncclFloat16 = 6,
  ncclFloat32 = 7,
  ncclFloat64 = 8,
  ncclBfloat16 = 9,
  ncclFloat8e4m3 = 10,
  ncclFloat8e5m2 = 11,
} ncclDataType_t;

// Built-in reduction ops; values >= 5 are dynamic ops from ncclRedOpCreate*.
typedef enum {
  ncclSum = 0,
  ncclProd = 1,
  ncclMax = 2,
  ncclMin = 3,
  ncclAvg = 4,
} ncclRedOp_t;

#define DDPSCOPE_NCCL_SPLIT_NOCOLOR (-1)

}  // extern "C"

namespace ddpscope::nccl {

// Bytes per element of an NCCL datatype; 0 for a value this ABI does not know.
inline size_t dtype_size(int dtype) {
  switch (dtype) {
    case ncclInt8:
    case ncclUint8:
    case ncclFloat8e4m3:
    case ncclFloat8e5m2:
      return 1;
    case ncclFloat16:
    case ncclBfloat16:
      return 2;
    case ncclInt32:
    case ncclUint32:
    case ncclFloat32:
      return 4;
    case ncclInt64:
    case ncclUint64:
    case ncclFloat64:
      return 8;
    default:
      return 0;
  }
}

}  // namespace ddpscope::nccl
