#include "injector/cupti/cupti_api.h"

#include <dlfcn.h>
#include <link.h>

#include <cstring>
#include <initializer_list>

namespace ddpscope::inject::cupti {

struct CuptiActivityApi::Fns {
  decltype(&cuptiActivityRegisterTimestampCallback) register_timestamp;
  decltype(&cuptiActivityRegisterCallbacks) register_callbacks;
  decltype(&cuptiActivityEnable) enable;
  decltype(&cuptiActivityDisable) disable;
  decltype(&cuptiActivityPushExternalCorrelationId) push;
  decltype(&cuptiActivityPopExternalCorrelationId) pop;
  decltype(&cuptiActivityFlushAll) flush;
  decltype(&cuptiActivityGetNextRecord) next;
  decltype(&cuptiActivityGetNumDroppedRecords) dropped;
  decltype(&cuptiGetTimestamp) timestamp;
  decltype(&cuptiGetResultString) result_string;
};

namespace {

// The activity kinds we record. RUNTIME and DRIVER API records are what
// external correlation records attach to; the converter drops them after.
constexpr CUpti_ActivityKind kKinds[] = {
    CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
    CUPTI_ACTIVITY_KIND_RUNTIME,
    CUPTI_ACTIVITY_KIND_DRIVER,
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
    CUPTI_ACTIVITY_KIND_MEMCPY,
    CUPTI_ACTIVITY_KIND_MEMCPY2,
    CUPTI_ACTIVITY_KIND_MEMSET,
    CUPTI_ACTIVITY_KIND_OVERHEAD,
};

int find_loaded(dl_phdr_info* info, size_t, void* out) {
  if (info->dlpi_name && strstr(info->dlpi_name, "libcupti.so")) {
    *static_cast<std::string*>(out) = info->dlpi_name;
    return 1;
  }
  return 0;
}

// The job's own CUPTI first (torch's wheel), then by soname, then the toolkit's.
void* open_cupti(std::string* which) {
  std::string loaded;
  dl_iterate_phdr(find_loaded, &loaded);
  if (!loaded.empty())
    if (void* h = dlopen(loaded.c_str(), RTLD_NOW | RTLD_NOLOAD)) return *which = loaded, h;
  for (const char* name :
       {"libcupti.so.13", "libcupti.so.12", "libcupti.so",
        "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so", "/usr/local/cuda/lib64/libcupti.so"})
    if (void* h = dlopen(name, RTLD_NOW | RTLD_LOCAL)) return *which = name, h;
  return nullptr;
}

}  // namespace

bool CuptiActivityApi::load() {
  void* h = open_cupti(&library_);
  if (!h) return error_ = "libcupti.so not found", false;
  auto* f = new Fns{};
  bool ok = true;
  auto get = [&](auto& fn, const char* name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(h, name));
    if (!fn && ok) error_ = std::string(name) + " missing in " + library_;
    ok = ok && fn;
  };
  get(f->register_timestamp, "cuptiActivityRegisterTimestampCallback");
  get(f->register_callbacks, "cuptiActivityRegisterCallbacks");
  get(f->enable, "cuptiActivityEnable");
  get(f->disable, "cuptiActivityDisable");
  get(f->push, "cuptiActivityPushExternalCorrelationId");
  get(f->pop, "cuptiActivityPopExternalCorrelationId");
  get(f->flush, "cuptiActivityFlushAll");
  get(f->next, "cuptiActivityGetNextRecord");
  get(f->dropped, "cuptiActivityGetNumDroppedRecords");
  get(f->timestamp, "cuptiGetTimestamp");
  get(f->result_string, "cuptiGetResultString");
  if (!ok) return delete f, false;
  fn_ = f;
  return true;
}

bool CuptiActivityApi::use_timestamps(CUpti_TimestampCallbackFunc now) {
  return fn_->register_timestamp(now) == CUPTI_SUCCESS;
}

bool CuptiActivityApi::register_buffers(CUpti_BuffersCallbackRequestFunc requested,
                                        CUpti_BuffersCallbackCompleteFunc completed) {
  CUptiResult r = fn_->register_callbacks(requested, completed);
  if (r != CUPTI_SUCCESS) error_ = "cuptiActivityRegisterCallbacks: " + result_text(r);
  return r == CUPTI_SUCCESS;
}

bool CuptiActivityApi::enable_activities() {
  for (CUpti_ActivityKind kind : kKinds) {
    CUptiResult r = fn_->enable(kind);
    if (r == CUPTI_SUCCESS) continue;
    error_ = "cuptiActivityEnable(" + std::to_string(int(kind)) + "): " + result_text(r);
    disable_activities();
    return false;
  }
  return true;
}

void CuptiActivityApi::disable_activities() {
  for (CUpti_ActivityKind kind : kKinds) fn_->disable(kind);
}

void CuptiActivityApi::push_external(uint64_t id) {
  fn_->push(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, id);
}

void CuptiActivityApi::pop_external() {
  uint64_t last = 0;
  fn_->pop(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last);
}

void CuptiActivityApi::flush_all(bool forced) {
  fn_->flush(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
}

bool CuptiActivityApi::next_record(uint8_t* buffer, size_t valid, CUpti_Activity** record) {
  return fn_->next(buffer, valid, record) == CUPTI_SUCCESS;
}

uint64_t CuptiActivityApi::dropped(CUcontext ctx, uint32_t stream) {
  size_t n = 0;
  return fn_->dropped(ctx, stream, &n) == CUPTI_SUCCESS ? n : 0;
}

uint64_t CuptiActivityApi::timestamp() {
  uint64_t t = 0;
  fn_->timestamp(&t);
  return t;
}

std::string CuptiActivityApi::result_text(CUptiResult r) {
  const char* s = nullptr;
  if (fn_ && fn_->result_string(r, &s) == CUPTI_SUCCESS && s) return s;
  return "CUPTI error " + std::to_string(int(r));
}

}  // namespace ddpscope::inject::cupti
