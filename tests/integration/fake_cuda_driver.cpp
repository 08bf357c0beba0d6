// libcuda.so.1 test double: the slice of the CUDA driver API the injector's
// CUDA-event timer uses, with the driver's documented semantics on the host, so
// its handling of work in flight, failures and stream capture is tested
// without a GPU (tests/integration/test_cuda_event_timer.cpp).
//
// The model: one context; any pointer is a stream. An event recorded on a
// stream completes at once, at the host's CLOCK_MONOTONIC, unless the stream
// is held (fakecuda_hold: work still running), in which case it completes
// when the stream is released. Stream capture follows cuda.h: a capture begun
// in mode GLOBAL makes "potentially unsafe" calls (event and stream
// synchronisation, event queries) from any other thread whose own interaction
// mode is GLOBAL fail with CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED and
// invalidate it (cuStreamEndCapture then fails with ..._INVALIDATED); a thread
// in THREAD_LOCAL or RELAXED mode is not concerned by other threads' captures.
// An event recorded on a capturing stream belongs to the capture: querying it
// always conflicts, and it never gives a time.
#include <cuda.h>
#include <time.h>

#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <vector>

#define FAKE_API extern "C" __attribute__((visibility("default")))

namespace {

struct FakeEvent {
  bool recorded = false;
  bool complete = false;
  bool captured = false;  // last recorded inside a capture sequence
  CUstream stream = nullptr;
  long long t_ns = 0;
};

struct Capture {
  CUstreamCaptureMode mode;
  const void* thread;
  bool invalidated = false;
};

struct Driver {
  std::mutex mu;
  std::condition_variable released;
  std::set<CUstream> held;
  std::map<CUstream, std::vector<FakeEvent*>> waiting;  // recorded while held, in order
  std::map<CUstream, Capture> captures;
  CUresult elapsed_error = CUDA_SUCCESS;  // fakecuda_elapsed_error
  int ctx_storage = 0;
};

Driver& driver() {
  static auto* d = new Driver;  // never destroyed: calls may come during exit
  return *d;
}

thread_local CUstreamCaptureMode t_mode = CU_STREAM_CAPTURE_MODE_GLOBAL;
thread_local char t_self;  // its address names the thread

long long now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

CUcontext the_context() { return reinterpret_cast<CUcontext>(&driver().ctx_storage); }

FakeEvent* event_of(CUevent e) { return reinterpret_cast<FakeEvent*>(e); }

// A potentially unsafe call on this thread (cuda.h, cuThreadExchangeStreamCaptureMode):
// refused, invalidating the captures that forbid it. Caller holds mu.
bool refused_by_capture(Driver& d) {
  bool refused = false;
  for (auto& [stream, c] : d.captures) {
    bool mine = c.thread == &t_self;
    bool forbids =
        mine ? c.mode != CU_STREAM_CAPTURE_MODE_RELAXED
             : c.mode == CU_STREAM_CAPTURE_MODE_GLOBAL && t_mode == CU_STREAM_CAPTURE_MODE_GLOBAL;
    if (forbids) c.invalidated = refused = true;
  }
  return refused;
}

}  // namespace

// ---- test controls ----
FAKE_API void fakecuda_hold(CUstream s) {
  std::lock_guard<std::mutex> lock(driver().mu);
  driver().held.insert(s);
}

// Completes every event recorded on `s` while it was held, now, in the order
// they were recorded (a stream runs its work in order).
FAKE_API void fakecuda_release(CUstream s) {
  Driver& d = driver();
  {
    std::lock_guard<std::mutex> lock(d.mu);
    d.held.erase(s);
    long long t = now_ns();
    for (FakeEvent* ev : d.waiting[s]) {
      ev->complete = true;
      ev->t_ns = t++;
    }
    d.waiting.erase(s);
  }
  d.released.notify_all();
}

// Makes every later cuEventElapsedTime fail with `error` (CUDA_SUCCESS: work again).
FAKE_API void fakecuda_elapsed_error(int error) {
  std::lock_guard<std::mutex> lock(driver().mu);
  driver().elapsed_error = CUresult(error);
}

// ---- the driver API ----
FAKE_API CUresult cuCtxGetCurrent(CUcontext* ctx) {
  *ctx = the_context();
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuCtxPushCurrent(CUcontext) { return CUDA_SUCCESS; }

FAKE_API CUresult cuCtxPopCurrent(CUcontext* ctx) {
  if (ctx) *ctx = the_context();
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuStreamGetCtx(CUstream, CUcontext* ctx) {
  *ctx = the_context();
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuStreamCreate(CUstream* s, unsigned int) {
  *s = reinterpret_cast<CUstream>(new char);
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuEventCreate(CUevent* e, unsigned int) {
  *e = reinterpret_cast<CUevent>(new FakeEvent);
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuEventRecord(CUevent e, CUstream s) {
  Driver& d = driver();
  std::lock_guard<std::mutex> lock(d.mu);
  FakeEvent& ev = *event_of(e);
  ev.recorded = true;
  ev.stream = s;
  ev.captured = d.captures.count(s) > 0;
  ev.complete = !ev.captured && !d.held.count(s);
  ev.t_ns = ev.complete ? now_ns() : 0;
  if (!ev.complete && !ev.captured) d.waiting[s].push_back(&ev);
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuEventQuery(CUevent e) {
  Driver& d = driver();
  std::lock_guard<std::mutex> lock(d.mu);
  FakeEvent& ev = *event_of(e);
  if (ev.captured) {
    if (auto it = d.captures.find(ev.stream); it != d.captures.end()) it->second.invalidated = true;
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  }
  if (refused_by_capture(d)) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  return ev.complete || !ev.recorded ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

FAKE_API CUresult cuEventSynchronize(CUevent e) {
  Driver& d = driver();
  std::unique_lock<std::mutex> lock(d.mu);
  FakeEvent& ev = *event_of(e);
  if (ev.captured) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  if (refused_by_capture(d)) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  d.released.wait(lock, [&] { return ev.complete || !ev.recorded; });
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuEventElapsedTime(float* ms, CUevent start, CUevent end) {
  Driver& d = driver();
  std::lock_guard<std::mutex> lock(d.mu);
  if (d.elapsed_error != CUDA_SUCCESS) return d.elapsed_error;
  FakeEvent& a = *event_of(start);
  FakeEvent& b = *event_of(end);
  if (!a.recorded || !b.recorded || a.captured || b.captured) return CUDA_ERROR_INVALID_HANDLE;
  if (!a.complete || !b.complete) return CUDA_ERROR_NOT_READY;
  *ms = float(double(b.t_ns - a.t_ns) / 1e6);
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuStreamBeginCapture(CUstream s, CUstreamCaptureMode mode) {
  Driver& d = driver();
  std::lock_guard<std::mutex> lock(d.mu);
  if (d.captures.count(s)) return CUDA_ERROR_ILLEGAL_STATE;
  d.captures[s] = Capture{mode, &t_self, false};
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuStreamEndCapture(CUstream s, CUgraph* graph) {
  Driver& d = driver();
  std::lock_guard<std::mutex> lock(d.mu);
  auto it = d.captures.find(s);
  if (it == d.captures.end()) return CUDA_ERROR_ILLEGAL_STATE;
  bool invalidated = it->second.invalidated;
  d.captures.erase(it);
  *graph = invalidated ? nullptr : reinterpret_cast<CUgraph>(new char);
  return invalidated ? CUDA_ERROR_STREAM_CAPTURE_INVALIDATED : CUDA_SUCCESS;
}

FAKE_API CUresult cuGraphDestroy(CUgraph graph) {
  delete reinterpret_cast<char*>(graph);
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuStreamIsCapturing(CUstream s, CUstreamCaptureStatus* status) {
  Driver& d = driver();
  std::lock_guard<std::mutex> lock(d.mu);
  if (!s && !d.captures.empty()) return CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;  // the legacy stream
  auto it = d.captures.find(s);
  *status = it == d.captures.end()   ? CU_STREAM_CAPTURE_STATUS_NONE
            : it->second.invalidated ? CU_STREAM_CAPTURE_STATUS_INVALIDATED
                                     : CU_STREAM_CAPTURE_STATUS_ACTIVE;
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode* mode) {
  CUstreamCaptureMode previous = t_mode;
  t_mode = *mode;
  *mode = previous;
  return CUDA_SUCCESS;
}
