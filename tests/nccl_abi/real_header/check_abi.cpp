// Compile-time proof that injector/nccl/nccl_abi.h and the prototypes in
// injector/nccl/nccl_api.h agree with one real nccl.h (DDPSCOPE_REAL_NCCL_H, an
// absolute path; CMake compiles this file once per nccl.h it finds). Any
// disagreement is a static_assert, so the build fails.
//
// Both headers declare the same names at global scope, so they cannot meet
// there. Ours stays global, exactly as the hooks see it; the real one goes into
// namespace `real`. Their enumerators and types then live apart (::ncclSuccess,
// real::ncclSuccess). Two things still meet across namespaces:
//  - C-linkage functions of one name are one function in every namespace, so the
//    hooked entry points are renamed while the real header is read (the list
//    below). A hooked name missing from it is a "conflicting C language linkage
//    declaration" (our ncclResult_t is not real::ncclResult_t): a warning in GCC,
//    which CMake makes an error for this file, so the list cannot fall behind
//    nccl_api.h unnoticed;
//  - an elaborated `struct ncclComm` / `struct CUstream_st` in the real header
//    finds the global one, so the opaque handles are literally the same types.
#include <cstddef>
#include <type_traits>

#include "injector/nccl/nccl_api.h"
#include "tests/nccl_abi/real_header/checked.h"

// Everything nccl.h includes, included first at global scope, so that its own
// #includes inside namespace `real` are no-ops (include guards).
#include <cuda_runtime.h>
// (then, as in nccl.h)
#include <cuda_fp16.h>
#if CUDART_VERSION >= 11000
#include <cuda_bf16.h>
#endif
#if CUDART_VERSION >= 11080
#include <cuda_fp8.h>
#endif
#include <limits.h>
#include <stdint.h>

// The hooked entry points of nccl_api.h.
// clang-format off
#define DDPSCOPE_HOOKED_NCCL(X) \
  X(ncclAllReduce) \
  X(ncclBroadcast) \
  X(ncclBcast) \
  X(ncclReduce) \
  X(ncclAllGather) \
  X(ncclReduceScatter) \
  X(ncclAlltoAll) \
  X(ncclGather) \
  X(ncclScatter) \
  X(ncclSend) \
  X(ncclRecv) \
  X(ncclGroupStart) \
  X(ncclGroupEnd) \
  X(ncclGroupSimulateEnd) \
  X(ncclCommInitRank) \
  X(ncclCommInitRankConfig) \
  X(ncclCommInitAll) \
  X(ncclCommSplit) \
  X(ncclCommDestroy) \
  X(ncclCommAbort) \
  X(ncclCommFinalize) \
  X(ncclCommCount) \
  X(ncclCommUserRank) \
  X(ncclCommCuDevice) \
  X(ncclCommGetAsyncError)
// clang-format on

#define ncclAllReduce real_ncclAllReduce
#define ncclBroadcast real_ncclBroadcast
#define ncclBcast real_ncclBcast
#define ncclReduce real_ncclReduce
#define ncclAllGather real_ncclAllGather
#define ncclReduceScatter real_ncclReduceScatter
#define ncclAlltoAll real_ncclAlltoAll
#define ncclGather real_ncclGather
#define ncclScatter real_ncclScatter
#define ncclSend real_ncclSend
#define ncclRecv real_ncclRecv
#define ncclGroupStart real_ncclGroupStart
#define ncclGroupEnd real_ncclGroupEnd
#define ncclGroupSimulateEnd real_ncclGroupSimulateEnd
#define ncclCommInitRank real_ncclCommInitRank
#define ncclCommInitRankConfig real_ncclCommInitRankConfig
#define ncclCommInitAll real_ncclCommInitAll
#define ncclCommSplit real_ncclCommSplit
#define ncclCommDestroy real_ncclCommDestroy
#define ncclCommAbort real_ncclCommAbort
#define ncclCommFinalize real_ncclCommFinalize
#define ncclCommCount real_ncclCommCount
#define ncclCommUserRank real_ncclCommUserRank
#define ncclCommCuDevice real_ncclCommCuDevice
#define ncclCommGetAsyncError real_ncclCommGetAsyncError
namespace real {
#include DDPSCOPE_REAL_NCCL_H
}
#undef ncclAllReduce
#undef ncclBroadcast
#undef ncclBcast
#undef ncclReduce
#undef ncclAllGather
#undef ncclReduceScatter
#undef ncclAlltoAll
#undef ncclGather
#undef ncclScatter
#undef ncclSend
#undef ncclRecv
#undef ncclGroupStart
#undef ncclGroupEnd
#undef ncclGroupSimulateEnd
#undef ncclCommInitRank
#undef ncclCommInitRankConfig
#undef ncclCommInitAll
#undef ncclCommSplit
#undef ncclCommDestroy
#undef ncclCommAbort
#undef ncclCommFinalize
#undef ncclCommCount
#undef ncclCommUserRank
#undef ncclCommCuDevice
#undef ncclCommGetAsyncError

namespace {

// --- Enums: same size and representation, and every enumerator we declare has
// the real value (the real enums have more, e.g. ncclTimeout; we need not).
template <typename Ours, typename Real>
constexpr bool same_enum_repr =
    sizeof(Ours) == sizeof(Real) && alignof(Ours) == alignof(Real) &&
    std::is_same_v<std::underlying_type_t<Ours>, std::underlying_type_t<Real>>;
static_assert(same_enum_repr<::ncclResult_t, real::ncclResult_t>);
static_assert(same_enum_repr<::ncclDataType_t, real::ncclDataType_t>);
static_assert(same_enum_repr<::ncclRedOp_t, real::ncclRedOp_t>);

#define DDPSCOPE_SAME_VALUE(name) \
  static_assert(static_cast<long long>(::name) == static_cast<long long>(real::name), #name);
DDPSCOPE_SAME_VALUE(ncclSuccess)
DDPSCOPE_SAME_VALUE(ncclUnhandledCudaError)
DDPSCOPE_SAME_VALUE(ncclSystemError)
DDPSCOPE_SAME_VALUE(ncclInternalError)
DDPSCOPE_SAME_VALUE(ncclInvalidArgument)
DDPSCOPE_SAME_VALUE(ncclInvalidUsage)
DDPSCOPE_SAME_VALUE(ncclRemoteError)
DDPSCOPE_SAME_VALUE(ncclInProgress)
DDPSCOPE_SAME_VALUE(ncclInt8)
DDPSCOPE_SAME_VALUE(ncclUint8)
DDPSCOPE_SAME_VALUE(ncclInt32)
DDPSCOPE_SAME_VALUE(ncclUint32)
DDPSCOPE_SAME_VALUE(ncclInt64)
DDPSCOPE_SAME_VALUE(ncclUint64)
DDPSCOPE_SAME_VALUE(ncclFloat16)
DDPSCOPE_SAME_VALUE(ncclFloat32)
DDPSCOPE_SAME_VALUE(ncclFloat64)
DDPSCOPE_SAME_VALUE(ncclBfloat16)
DDPSCOPE_SAME_VALUE(ncclFloat8e4m3)
DDPSCOPE_SAME_VALUE(ncclFloat8e5m2)
DDPSCOPE_SAME_VALUE(ncclSum)
DDPSCOPE_SAME_VALUE(ncclProd)
DDPSCOPE_SAME_VALUE(ncclMax)
DDPSCOPE_SAME_VALUE(ncclMin)
DDPSCOPE_SAME_VALUE(ncclAvg)
// dtype_size() maps every datatype value below ncclNumTypes; ncclAvg + 1 is where
// dynamic (ncclRedOpCreate*) ops begin, which the hooks report as custom.
static_assert(int(::ncclFloat8e5m2) + 1 == int(real::ncclNumTypes), "a datatype we do not know");
static_assert(int(::ncclAvg) + 1 == int(real::ncclNumOps), "a built-in op we do not know");
static_assert(DDPSCOPE_NCCL_SPLIT_NOCOLOR == NCCL_SPLIT_NOCOLOR);

// --- ncclUniqueId travels by value through ncclCommInitRank*: same layout.
static_assert(DDPSCOPE_NCCL_UNIQUE_ID_BYTES == NCCL_UNIQUE_ID_BYTES);
static_assert(sizeof(::ncclUniqueId) == sizeof(real::ncclUniqueId));
static_assert(alignof(::ncclUniqueId) == alignof(real::ncclUniqueId));
static_assert(offsetof(::ncclUniqueId, internal) == offsetof(real::ncclUniqueId, internal));
static_assert(
    std::is_same_v<decltype(::ncclUniqueId::internal), decltype(real::ncclUniqueId::internal)>);
static_assert(std::is_trivially_copyable_v<::ncclUniqueId> &&
              std::is_trivially_copyable_v<real::ncclUniqueId>);

// --- Handles: the real header's handle types are our very types (see top).
// (cudaStream_t needs no assert: ours and cuda_runtime.h's are both global
// typedefs, which would not compile if they named different types.)
static_assert(std::is_same_v<::ncclComm_t, real::ncclComm_t>);

// --- ncclConfig_t and ncclSimInfo_t only ever pass through by pointer: ours must stay
// incomplete so that no hook can come to depend on a layout NCCL versions change.
template <typename T>
concept complete = requires {
  sizeof(T);
};
static_assert(!complete<::ncclConfig_t>);
static_assert(complete<real::ncclConfig_t>);
static_assert(!complete<::ncclSimInfo_t>);
static_assert(complete<real::ncclSimInfo_t>);

// --- Prototypes: our declaration's type, with each of our types replaced by the
// real type it was just proven to match, is the real declaration's type.
template <typename T>
struct to_real {
  using type = T;
};
template <typename T>
using to_real_t = typename to_real<T>::type;
template <>
struct to_real<::ncclResult_t> {
  using type = real::ncclResult_t;
};
template <>
struct to_real<::ncclDataType_t> {
  using type = real::ncclDataType_t;
};
template <>
struct to_real<::ncclRedOp_t> {
  using type = real::ncclRedOp_t;
};
template <>
struct to_real<::ncclUniqueId> {
  using type = real::ncclUniqueId;
};
template <>
struct to_real<::ncclConfig_t> {
  using type = real::ncclConfig_t;
};
template <>
struct to_real<::ncclSimInfo_t> {
  using type = real::ncclSimInfo_t;
};
template <typename T>
struct to_real<T*> {
  using type = to_real_t<T>*;
};
template <typename T>
struct to_real<const T> {
  using type = const to_real_t<T>;
};
template <typename R, typename... A>
struct to_real<R (*)(A...)> {
  using type = to_real_t<R> (*)(to_real_t<A>...);
};

#define DDPSCOPE_SAME_PROTOTYPE(name)                                                       \
  static_assert(std::is_same_v<to_real_t<decltype(&::name)>, decltype(&real::real_##name)>, \
                #name ": our prototype differs from nccl.h's");
DDPSCOPE_HOOKED_NCCL(DDPSCOPE_SAME_PROTOTYPE)

const bool registered =
    ddpscope::nccl_abi_check::add_checked({DDPSCOPE_REAL_NCCL_LABEL, DDPSCOPE_REAL_NCCL_H,
                                           NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH, NCCL_VERSION_CODE});

}  // namespace
