// The CUPTI activity tracer: 8 MiB buffers handed to CUPTI on request, at most
// kMaxBuffers of them (CUPTI drops, and counts, the records it has no buffer
// for: a job launching faster than we flush never grows our memory without
// bound), converted on completion (on CUPTI's thread, or ours during a flush)
// into an ActivityBatch that the writer thread collects. Our mutex guards only
// the buffer pool and the converted batch, and is never held while calling
// CUPTI.
#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <vector>

#include "injector/cupti/activity_convert.h"
#include "injector/cupti/cupti_api.h"
#include "injector/runtime/counters.h"
#include "injector/runtime/device_tracer.h"
#include "injector/runtime/log.h"
#include "profiler/core/clock.h"

namespace ddpscope::inject {
namespace {

constexpr size_t kBufferBytes = 8u << 20;
constexpr int kMaxBuffers = 8;  // 64 MiB: CUPTI hands buffers back at every flush
constexpr size_t kAlign = 8;    // CUPTI's requirement for activity buffers

class CuptiTracer final : public DeviceTracer {
 public:
  explicit CuptiTracer(const cupti::CuptiActivityApi& api) : api_(api) {}

  bool start(const char** why);
  void push_correlation(uint64_t external) override { api_.push_external(external); }
  void pop_correlation() override { api_.pop_external(); }
  void collect(ActivityBatch& out) override;
  void stop() override;

  // CUPTI's buffer callbacks (static trampolines below).
  void on_request(uint8_t** buffer, size_t* size, size_t* max_records);
  void on_complete(CUcontext ctx, uint32_t stream, uint8_t* buffer, size_t valid);

 private:
  void refused();
  cupti::CuptiActivityApi api_;
  int64_t offset_ns_ = 0;  // CUPTI clock -> ours, when our clock was refused
  bool stopped_ = false;
  std::mutex mu_;  // guards free_, allocated_ and batch_ only
  std::vector<uint8_t*> free_;
  int allocated_ = 0;
  ActivityBatch batch_;
};

CuptiTracer* g_tracer = nullptr;

void CUPTIAPI request_trampoline(uint8_t** buffer, size_t* size, size_t* max_records) {
  g_tracer->on_request(buffer, size, max_records);
}

void CUPTIAPI complete_trampoline(CUcontext ctx, uint32_t stream, uint8_t* buffer, size_t,
                                  size_t valid) {
  g_tracer->on_complete(ctx, stream, buffer, valid);
}

uint64_t CUPTIAPI our_clock() { return uint64_t(clock::monotonic_ns()); }

bool CuptiTracer::start(const char** why) {
  static std::string error;
  g_tracer = this;
  // One timeline: CUPTI stamps with our clock; otherwise measure the offset.
  if (!api_.use_timestamps(our_clock))
    offset_ns_ = clock::monotonic_ns() - int64_t(api_.timestamp());
  if (!api_.register_buffers(request_trampoline, complete_trampoline) ||
      !api_.enable_activities()) {
    error = api_.error();
    *why = error.c_str();
    return false;
  }
  return true;
}

void CuptiTracer::on_request(uint8_t** buffer, size_t* size, size_t* max_records) {
  uint8_t* b = nullptr;
  bool may_allocate = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!free_.empty()) {
      b = free_.back();
      free_.pop_back();
    } else if (allocated_ < kMaxBuffers) {
      may_allocate = true;
      ++allocated_;
    }
  }
  if (may_allocate && !(b = static_cast<uint8_t*>(std::aligned_alloc(kAlign, kBufferBytes)))) {
    std::lock_guard<std::mutex> lock(mu_);
    --allocated_;
  }
  if (!b) refused();
  *buffer = b;
  *size = b ? kBufferBytes : 0;  // none: CUPTI drops the records, and counts them
  *max_records = 0;              // as many as fit
}

// Cold: CUPTI's thread (or the job's) asked past the cap.
void CuptiTracer::refused() {
  count(Counter::cupti_buffers_refused);
  notice_once(Notice::cupti_buffers,
              "CUPTI produced activity records faster than %d MiB of buffers could hold "
              "between flushes: the rest are dropped (meta cupti_dropped_records, "
              "count:cupti_buffers_refused)",
              int(kMaxBuffers * (kBufferBytes >> 20)));
}

void CuptiTracer::on_complete(CUcontext ctx, uint32_t stream, uint8_t* buffer, size_t valid) {
  ActivityBatch local;
  CUpti_Activity* record = nullptr;
  while (valid && api_.next_record(buffer, valid, &record))
    cupti::convert(record, offset_ns_, local);
  local.dropped = api_.dropped(ctx, stream);
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& k : local.kernels) batch_.kernels.push_back(std::move(k));
  batch_.links.insert(batch_.links.end(), local.links.begin(), local.links.end());
  batch_.dropped += local.dropped;
  batch_.overhead_ns += local.overhead_ns;
  if (buffer) free_.push_back(buffer);
}

void CuptiTracer::collect(ActivityBatch& out) {
  if (!stopped_) api_.flush_all(false);  // completed buffers come back through on_complete
  std::lock_guard<std::mutex> lock(mu_);
  std::swap(out, batch_);
  batch_.clear();
}

void CuptiTracer::stop() {
  if (stopped_) return;
  api_.flush_all(true);  // also the records of buffers not yet full
  api_.disable_activities();
  stopped_ = true;
}

}  // namespace

// The job must have loaded the driver itself: we never initialise CUDA.
DeviceTracer* make_cupti_tracer(const char** why) {
  void* driver = dlopen("libcuda.so.1", RTLD_NOLOAD | RTLD_LAZY);
  if (!driver) return *why = "no CUDA driver in this process", nullptr;
  dlclose(driver);
  static cupti::CuptiActivityApi api;
  if (!api.load()) return *why = api.error().c_str(), nullptr;
  auto* tracer = new CuptiTracer(api);  // lives until exit: CUPTI may call back late
  if (!tracer->start(why)) return nullptr;
  return tracer;
}

}  // namespace ddpscope::inject
