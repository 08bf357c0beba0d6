// libcupti.so.13 test double: the CUPTI activity entry points the injector's
// tracer resolves (injector/cupti/cupti_api.cpp), with CUPTI's buffer protocol
// on the host and no activity of its own, so the tracer's buffer handling and
// its life cycle are tested without a GPU (tests/integration/test_cupti_tracer.cpp).
//
// The model: a program asks for buffers as CUPTI does when activity records
// need room (fakecupti_request); a buffer granted is held until a flush
// (cuptiActivityFlushAll) completes it, with no records; a request answered
// with no buffer drops a buffer's worth of records (kRecordsPerBuffer), which
// cuptiActivityGetNumDroppedRecords reports and resets, as CUPTI's does.
#include <cupti.h>
#include <time.h>

#include <mutex>
#include <set>
#include <vector>

#define FAKE_API extern "C" __attribute__((visibility("default")))

namespace {

constexpr size_t kRecordsPerBuffer = 1000;

struct Cupti {
  std::mutex mu;
  CUpti_BuffersCallbackRequestFunc requested = nullptr;
  CUpti_BuffersCallbackCompleteFunc completed = nullptr;
  std::set<int> enabled;
  std::vector<std::pair<uint8_t*, size_t>> held;  // granted, not yet completed
  size_t dropped = 0;
};

Cupti& cupti() {
  static auto* c = new Cupti;  // never destroyed: the tracer may call during exit
  return *c;
}

}  // namespace

// ---- test controls ----

// Asks for `n` buffers; returns how many were granted (-1: no tool registered).
FAKE_API int fakecupti_request(int n) {
  Cupti& c = cupti();
  if (!c.requested) return -1;
  int granted = 0;
  for (int i = 0; i < n; ++i) {
    uint8_t* buffer = nullptr;
    size_t size = 0, max_records = 0;
    c.requested(&buffer, &size, &max_records);  // never under our mutex: it may flush
    std::lock_guard<std::mutex> lock(c.mu);
    if (buffer && size) {
      c.held.push_back({buffer, size});
      ++granted;
    } else {
      c.dropped += kRecordsPerBuffer;
    }
  }
  return granted;
}

// How many activity kinds are enabled now.
FAKE_API int fakecupti_enabled_kinds() {
  std::lock_guard<std::mutex> lock(cupti().mu);
  return int(cupti().enabled.size());
}

// ---- the CUPTI API ----
FAKE_API CUptiResult cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc) {
  return CUPTI_SUCCESS;
}

FAKE_API CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc requested,
                                                    CUpti_BuffersCallbackCompleteFunc completed) {
  std::lock_guard<std::mutex> lock(cupti().mu);
  cupti().requested = requested;
  cupti().completed = completed;
  return CUPTI_SUCCESS;
}

FAKE_API CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind) {
  std::lock_guard<std::mutex> lock(cupti().mu);
  cupti().enabled.insert(int(kind));
  return CUPTI_SUCCESS;
}

FAKE_API CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind) {
  std::lock_guard<std::mutex> lock(cupti().mu);
  cupti().enabled.erase(int(kind));
  return CUPTI_SUCCESS;
}

FAKE_API CUptiResult cuptiActivityPushExternalCorrelationId(CUpti_ExternalCorrelationKind,
                                                            uint64_t) {
  return CUPTI_SUCCESS;
}

FAKE_API CUptiResult cuptiActivityPopExternalCorrelationId(CUpti_ExternalCorrelationKind,
                                                           uint64_t* last) {
  if (last) *last = 0;
  return CUPTI_SUCCESS;
}

// Completes every buffer held, with no records, on the calling thread.
FAKE_API CUptiResult cuptiActivityFlushAll(uint32_t) {
  Cupti& c = cupti();
  std::vector<std::pair<uint8_t*, size_t>> done;
  CUpti_BuffersCallbackCompleteFunc completed;
  {
    std::lock_guard<std::mutex> lock(c.mu);
    done.swap(c.held);
    completed = c.completed;
  }
  for (auto [buffer, size] : done) completed(nullptr, 0, buffer, size, 0);
  return CUPTI_SUCCESS;
}

FAKE_API CUptiResult cuptiActivityGetNextRecord(uint8_t*, size_t, CUpti_Activity**) {
  return CUPTI_ERROR_MAX_LIMIT_REACHED;  // no records: the end of every buffer
}

FAKE_API CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext, uint32_t, size_t* dropped) {
  std::lock_guard<std::mutex> lock(cupti().mu);
  *dropped = cupti().dropped;
  cupti().dropped = 0;
  return CUPTI_SUCCESS;
}

FAKE_API CUptiResult cuptiGetTimestamp(uint64_t* t) {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  *t = uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
  return CUPTI_SUCCESS;
}

FAKE_API CUptiResult cuptiGetResultString(CUptiResult, const char** s) {
  *s = "fake CUPTI";
  return CUPTI_SUCCESS;
}
