// Device timing of NCCL calls with CUDA events, through the driver API that the
// job itself loaded (we never load or initialise CUDA on our own). Events come
// from a pool created once per CUDA context; the writer thread reads them with
// cuEventQuery, never blocking on the job's streams, and maps GPU time to our
// monotonic clock through an anchor event it records on a private stream.
//
// Stream capture (CUDA graphs): a collective on a capturing stream does not
// run now, so it gets no events (capturing()). The writer thread's queries
// and anchor are "potentially unsafe" calls, which a capture begun in global
// mode on another thread forbids and is invalidated by, unless the calling
// thread's own interaction mode is thread-local: the writer thread sets that
// mode before its first call, as PyTorch's NCCL watchdog does for its queries.
#include <cuda.h>
#include <dlfcn.h>

#include <atomic>
#include <mutex>

#include "injector/runtime/collective_timer.h"
#include "injector/runtime/comm_events.h"
#include "injector/runtime/log.h"
#include "profiler/core/clock.h"

namespace ddpscope::inject {
namespace {

// Each driver entry point is bound under the name, and with the prototype, that
// a program compiled against this cuda.h would use: cuda.h maps some names to
// versioned symbols (cuCtxPushCurrent to cuCtxPushCurrent_v2), and a symbol
// looked up by hand can take other arguments than the name it replaces
// (cuStreamGetCtx_v2 takes a third, a CUgreenCtx*: called with two, it wrote
// through a garbage pointer and crashed the job on an H100). One token gives
// both the member's type and the symbol's name, so they cannot disagree.
#define DDPSCOPE_STRINGIFY(x) #x
#define DDPSCOPE_SYMBOL_OF(fn) DDPSCOPE_STRINGIFY(fn)
#define DDPSCOPE_DRIVER_FN(fn) decltype(&::fn) fn = nullptr

struct DriverApi {
  DDPSCOPE_DRIVER_FN(cuEventCreate);
  DDPSCOPE_DRIVER_FN(cuEventRecord);
  DDPSCOPE_DRIVER_FN(cuEventQuery);
  DDPSCOPE_DRIVER_FN(cuEventSynchronize);
  DDPSCOPE_DRIVER_FN(cuEventElapsedTime);
  DDPSCOPE_DRIVER_FN(cuStreamCreate);
  DDPSCOPE_DRIVER_FN(cuStreamGetCtx);
  DDPSCOPE_DRIVER_FN(cuCtxGetCurrent);
  DDPSCOPE_DRIVER_FN(cuCtxPushCurrent);
  DDPSCOPE_DRIVER_FN(cuCtxPopCurrent);
  DDPSCOPE_DRIVER_FN(cuStreamIsCapturing);
  DDPSCOPE_DRIVER_FN(cuThreadExchangeStreamCaptureMode);

  bool load() {
    void* h = dlopen("libcuda.so.1", RTLD_NOLOAD | RTLD_LAZY);  // only if the job loaded it
    if (!h) return false;
    bool ok = true;
    auto get = [&](auto& fn, const char* symbol) {
      void* p = dlsym(h, symbol);
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p);
      ok = ok && p;
    };
#define DDPSCOPE_BIND(fn) get(fn, DDPSCOPE_SYMBOL_OF(fn))
    DDPSCOPE_BIND(cuEventCreate);
    DDPSCOPE_BIND(cuEventRecord);
    DDPSCOPE_BIND(cuEventQuery);
    DDPSCOPE_BIND(cuEventSynchronize);
    DDPSCOPE_BIND(cuEventElapsedTime);
    DDPSCOPE_BIND(cuStreamCreate);
    DDPSCOPE_BIND(cuStreamGetCtx);
    DDPSCOPE_BIND(cuCtxGetCurrent);
    DDPSCOPE_BIND(cuCtxPushCurrent);
    DDPSCOPE_BIND(cuCtxPopCurrent);
    DDPSCOPE_BIND(cuStreamIsCapturing);
    DDPSCOPE_BIND(cuThreadExchangeStreamCaptureMode);
#undef DDPSCOPE_BIND
    return ok;
  }
};

constexpr uint32_t kSlotsPerContext = 2048;
constexpr int kMaxContexts = 8;

struct Slot {
  std::atomic<int> state{0};  // 0 free, 1 started, 2 ended
  std::atomic<int> uses{0};   // events still to read it (the writer, or a hook giving up)
  CUevent start = nullptr, stop = nullptr;
  bool resolved = false;
  TimerReading reading;
};

struct ContextPool {
  CUcontext ctx = nullptr;
  CUstream anchor_stream = nullptr;
  CUevent anchor = nullptr;
  int64_t anchor_ns = 0;
  std::atomic<uint32_t> next{0};
  Slot slots[kSlotsPerContext];
};

class CudaEventTimer final : public CollectiveTimer {
 public:
  explicit CudaEventTimer(const DriverApi& api) : api_(api) {}

  uint32_t begin(void* stream) override {
    CUcontext ctx = context_of(stream);
    int p = ctx ? pool_for(ctx) : -1;
    if (p < 0) return kNoTimer;
    ContextPool& pool = *pools_[p].load(std::memory_order_acquire);
    uint32_t i = pool.next.fetch_add(1, std::memory_order_relaxed) % kSlotsPerContext;
    int expected = 0;
    if (!pool.slots[i].state.compare_exchange_strong(expected, 1)) return kNoTimer;  // all busy
    Slot& s = pool.slots[i];
    s.resolved = false;
    if (api_.cuEventRecord(s.start, CUstream(stream)) != CUDA_SUCCESS) {
      s.state.store(0);
      return kNoTimer;
    }
    return uint32_t(p) * kSlotsPerContext + i;
  }

  void end(uint32_t id, void* stream, int uses) override {
    Slot& s = slot(id);
    s.uses.store(uses, std::memory_order_relaxed);
    if (api_.cuEventRecord(s.stop, CUstream(stream)) != CUDA_SUCCESS) s.resolved = true;  // failed
    s.state.store(2, std::memory_order_release);
  }

  bool capturing(void* stream) override {
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    // The legacy stream answers an error while another stream captures: a
    // collective there is the job's own mistake, and timed as usual.
    return api_.cuStreamIsCapturing(CUstream(stream), &status) == CUDA_SUCCESS &&
           status != CU_STREAM_CAPTURE_STATUS_NONE;
  }

  // NOT_READY is work still running: asked again at the next flush. Any other
  // error will not go away (an event the driver cannot time): the slot
  // resolves as failed and its collectives are written host-timed.
  TimerReading poll(uint32_t id) override {
    thread_local_capture_mode();
    Slot& s = slot(id);
    if (s.state.load(std::memory_order_acquire) != 2) return {};
    if (s.resolved) return s.reading.state == TimerReading::State::done ? s.reading : failed();
    CUresult q = api_.cuEventQuery(s.stop);
    if (q == CUDA_ERROR_NOT_READY) return {};
    if (q != CUDA_SUCCESS) return resolve(s, failed());
    ContextPool& pool = *pools_[id / kSlotsPerContext].load(std::memory_order_acquire);
    float to_start = 0, to_stop = 0;  // ms from each event to the (later) anchor
    CUresult a = api_.cuEventElapsedTime(&to_start, s.start, pool.anchor);
    CUresult b = a == CUDA_SUCCESS ? api_.cuEventElapsedTime(&to_stop, s.stop, pool.anchor) : a;
    if (a == CUDA_ERROR_NOT_READY || b == CUDA_ERROR_NOT_READY) return {};
    if (a != CUDA_SUCCESS || b != CUDA_SUCCESS) return resolve(s, failed());
    if (to_stop < 0) return {};  // completed after the anchor: read it at the next flush
    TimerReading r;
    r.state = TimerReading::State::done;
    r.start_ns = pool.anchor_ns - int64_t(double(to_start) * 1e6);
    r.end_ns = pool.anchor_ns - int64_t(double(to_stop) * 1e6);
    return resolve(s, r);
  }

  void release(uint32_t id) override {
    Slot& s = slot(id);
    if (s.uses.fetch_sub(1, std::memory_order_acq_rel) <= 1)
      s.state.store(0, std::memory_order_release);
  }

  void sync_clocks() override {
    thread_local_capture_mode();
    for (int p = 0; p < kMaxContexts; ++p) {
      ContextPool* pool = pools_[p].load(std::memory_order_acquire);
      if (!pool) continue;
      CUcontext popped;
      if (api_.cuCtxPushCurrent(pool->ctx) != CUDA_SUCCESS) continue;
      int64_t before = clock::monotonic_ns();
      if (api_.cuEventRecord(pool->anchor, pool->anchor_stream) == CUDA_SUCCESS &&
          api_.cuEventSynchronize(pool->anchor) == CUDA_SUCCESS)
        pool->anchor_ns = before + (clock::monotonic_ns() - before) / 2;
      api_.cuCtxPopCurrent(&popped);
    }
  }

 private:
  static TimerReading failed() {
    TimerReading r;
    r.state = TimerReading::State::failed;
    return r;
  }
  static TimerReading resolve(Slot& s, TimerReading r) {
    s.resolved = true;
    s.reading = r;
    return r;
  }
  // Once per thread (the writer's): other threads' global-mode captures no
  // longer concern this thread's calls, so they neither fail nor invalidate them.
  void thread_local_capture_mode() {
    static thread_local bool set = false;
    if (set) return;
    CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_THREAD_LOCAL;
    set = api_.cuThreadExchangeStreamCaptureMode(&mode) == CUDA_SUCCESS;
  }

  Slot& slot(uint32_t id) {
    return pools_[id / kSlotsPerContext]
        .load(std::memory_order_acquire)
        ->slots[id % kSlotsPerContext];
  }

  CUcontext context_of(void* stream) {
    CUcontext ctx = nullptr;
    if (api_.cuStreamGetCtx(CUstream(stream), &ctx) != CUDA_SUCCESS || !ctx)
      api_.cuCtxGetCurrent(&ctx);
    return ctx;
  }

  int pool_for(CUcontext ctx) {
    for (int p = 0; p < kMaxContexts; ++p) {
      ContextPool* pool = pools_[p].load(std::memory_order_acquire);
      if (!pool) break;
      if (pool->ctx == ctx) return p;
    }
    return create_pool(ctx);
  }

  // Once per context: 2 x kSlotsPerContext events and a private non-blocking
  // stream for clock anchors (never the legacy default stream, which would
  // serialise with the job's work).
  int create_pool(CUcontext ctx) {
    std::lock_guard<std::mutex> lock(mu_);
    int p = 0;
    for (; p < kMaxContexts && pools_[p].load(); ++p)
      if (pools_[p].load()->ctx == ctx) return p;
    if (p == kMaxContexts) return -1;
    auto* pool = new ContextPool;
    pool->ctx = ctx;
    CUcontext popped;
    bool ok = api_.cuCtxPushCurrent(ctx) == CUDA_SUCCESS;
    ok = ok && api_.cuStreamCreate(&pool->anchor_stream, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS;
    ok = ok && api_.cuEventCreate(&pool->anchor, CU_EVENT_DEFAULT) == CUDA_SUCCESS;
    for (auto& s : pool->slots) {
      ok = ok && api_.cuEventCreate(&s.start, CU_EVENT_DEFAULT) == CUDA_SUCCESS &&
           api_.cuEventCreate(&s.stop, CU_EVENT_DEFAULT) == CUDA_SUCCESS;
    }
    api_.cuCtxPopCurrent(&popped);
    if (!ok) {
      notice_once(Notice::cuda_timer, "cannot create CUDA events; NCCL calls are host-timed");
      return -1;  // the pool leaks: a one-off on a broken driver
    }
    pools_[p].store(pool, std::memory_order_release);
    return p;
  }

  DriverApi api_;
  std::mutex mu_;
  std::atomic<ContextPool*> pools_[kMaxContexts] = {};
};

}  // namespace

CollectiveTimer* make_cuda_event_timer() {
  DriverApi api{};
  if (!api.load()) return nullptr;
  return new CudaEventTimer(api);
}

}  // namespace ddpscope::inject
