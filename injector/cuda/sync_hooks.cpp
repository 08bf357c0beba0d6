// Hooks on the CUDA runtime's waits: the host time a rank spends blocked in
// cudaStreamSynchronize, cudaDeviceSynchronize and cudaEventSynchronize, and
// cudaStreamWaitEvent as a dependency edge (the host call only: it does not
// block). Each is: enabled check, timestamp, the real call, timestamp, one
// SyncEvent; the job gets exactly what the real call returned, error or not.
//
// Only calls that reach libcudart through its dynamic symbols are seen (torch,
// and programs built with -cudart shared); a program linked with the static
// cudart (nvcc's default) calls its own copy and is not interposed.
//
// The few runtime types are declared here, so these hooks build without the
// toolkit (as the NCCL hooks do with nccl_abi.h): handles are opaque pointers
// and cudaError_t is an int-sized enum.
#include <atomic>

#include "injector/runtime/capture.h"
#include "injector/runtime/log.h"
#include "injector/runtime/source.h"
#include "injector/runtime/symbols.h"
#include "profiler/core/clock.h"

extern "C" {
typedef struct CUstream_st* cudaStream_t;
typedef struct CUevent_st* cudaEvent_t;
typedef int cudaError_t;

cudaError_t cudaStreamSynchronize(cudaStream_t stream);
cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t stream);
cudaError_t cudaDeviceSynchronize(void);
cudaError_t cudaEventSynchronize(cudaEvent_t event);
cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags);
cudaError_t cudaStreamWaitEvent_ptsz(cudaStream_t stream, cudaEvent_t event, unsigned int flags);
}

namespace ddpscope::inject::cuda {
namespace {

// CUDA waits as a capture source (injector/runtime/source.h): one event body,
// one row of the syncs table.
struct SyncEvent {
  uint64_t t_start, t_end;
  uint64_t stream;
  uint32_t tid;
  SyncCall call;
};

void convert(const Event& e, Rows& rows) {
  const auto& c = e.as<SyncEvent>();
  rows.add(SyncRecord{0, c.tid, c.call, c.stream, rows.to_ns(c.t_start), rows.to_ns(c.t_end)});
}

SourceId source() {
  static const SourceId id = register_source({"cuda_waits", convert});
  return id;
}

// Where no loaded object defines the function (symbols.h): the runtime's own
// answer when it cannot initialise (cudaErrorInitializationError).
constexpr cudaError_t kNoRuntime = 3;

// pip's torch loads libcudart RTLD_LOCAL from its wheel: the search looks past
// RTLD_NEXT into the caller's scope (symbols.h).
template <typename Fn>
[[gnu::always_inline]] inline Fn real(std::atomic<void*>& cache, const char* name,
                                      const void* caller) {
  return cached_real<Fn>(cache, [&] {
    return resolve_real(cache, {name}, {"libcudart.so.13", "libcudart.so.12", "libcudart.so"},
                        caller, "cudaErrorInitializationError");
  });
}

template <typename Fn, typename... Args>
cudaError_t wait(SyncCall call, cudaStream_t stream, Fn real_fn, Args... args) {
  if (!real_fn) return kNoRuntime;
  if (!capturing()) return real_fn(args...);
  ReentrancyGuard guard;
  uint64_t t0 = clock::ticks();
  cudaError_t rc = real_fn(args...);
  uint64_t t1 = clock::ticks();
  if (auto* ev = reserve_event_body<SyncEvent>(source(), 0)) {
    *ev = SyncEvent{t0, t1, reinterpret_cast<uint64_t>(stream), thread_id(), call};
    publish_event();
  }
  return rc;
}

}  // namespace
}  // namespace ddpscope::inject::cuda

#define DDPSCOPE_REAL_CUDART(name)                                                \
  ([](const void* caller) {                                                       \
    static std::atomic<void*> cache{nullptr};                                     \
    return ::ddpscope::inject::cuda::real<decltype(&name)>(cache, #name, caller); \
  }(DDPSCOPE_CALLER()))

using ddpscope::SyncCall;
using ddpscope::inject::cuda::wait;

extern "C" {

cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  return wait(SyncCall::stream_synchronize, stream, DDPSCOPE_REAL_CUDART(cudaStreamSynchronize),
              stream);
}

// The per-thread-default-stream entry points (code built with
// --default-stream per-thread calls these instead).
cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t stream) {
  return wait(SyncCall::stream_synchronize, stream,
              DDPSCOPE_REAL_CUDART(cudaStreamSynchronize_ptsz), stream);
}

cudaError_t cudaDeviceSynchronize(void) {
  return wait(SyncCall::device_synchronize, nullptr, DDPSCOPE_REAL_CUDART(cudaDeviceSynchronize));
}

// The event's stream is not known here: recorded with stream 0.
cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  return wait(SyncCall::event_synchronize, nullptr, DDPSCOPE_REAL_CUDART(cudaEventSynchronize),
              event);
}

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags) {
  return wait(SyncCall::stream_wait_event, stream, DDPSCOPE_REAL_CUDART(cudaStreamWaitEvent),
              stream, event, flags);
}

cudaError_t cudaStreamWaitEvent_ptsz(cudaStream_t stream, cudaEvent_t event, unsigned int flags) {
  return wait(SyncCall::stream_wait_event, stream, DDPSCOPE_REAL_CUDART(cudaStreamWaitEvent_ptsz),
              stream, event, flags);
}

}  // extern "C"
