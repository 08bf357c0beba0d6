#include "injector/runtime/device_tracer.h"

#include <atomic>
#include <mutex>
#include <string_view>

#include "injector/runtime/log.h"
#include "profiler/core/inject_options.h"

namespace ddpscope::inject {

#ifdef DDPSCOPE_HAVE_CUDA
// injector/cupti/cupti_tracer.cpp: null with `why` set when CUPTI cannot run.
DeviceTracer* make_cupti_tracer(const char** why);
#endif

namespace {
std::atomic<DeviceTracer*> g_tracer{nullptr};
std::atomic<uint32_t> g_next_correlation{0};
std::atomic<bool> g_started{false};  // a plain load on the hot path, not call_once's
}  // namespace

void start_device_tracer() {
  if (g_started.load(std::memory_order_acquire)) return;
  static std::once_flag once;
  std::call_once(once, [] {
    if (inject_option("DDPSCOPE_CUPTI") == "0") return;
#ifdef DDPSCOPE_HAVE_CUDA
    const char* why = nullptr;
    DeviceTracer* t = make_cupti_tracer(&why);
    if (t)
      g_tracer.store(t, std::memory_order_release);
    else
      notice_once(Notice::cupti, "no CUPTI kernel timing (%s); NCCL calls keep %s timing", why,
                  "event or host");
#else
    notice_once(Notice::cupti,
                "built without CUDA: no CUPTI kernel timing; NCCL calls are host-timed");
#endif
    g_started.store(true, std::memory_order_release);
  });
}

DeviceTracer* device_tracer() { return g_tracer.load(std::memory_order_acquire); }

uint32_t next_correlation() {
  uint32_t id = g_next_correlation.fetch_add(1, std::memory_order_relaxed) + 1;
  return id ? id : g_next_correlation.fetch_add(1, std::memory_order_relaxed) + 1;
}

}  // namespace ddpscope::inject
