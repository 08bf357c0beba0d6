#include "injector/cupti/activity_convert.h"

#include <cxxabi.h>

#include <cstdlib>

namespace ddpscope::inject::cupti {
namespace {

int64_t on_our_clock(uint64_t cupti_ns, int64_t offset_ns) {
  return cupti_ns ? int64_t(cupti_ns) + offset_ns : kNoTime;
}

const char* memcpy_name(uint8_t copy_kind) {
  switch (copy_kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
      return "memcpy HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
      return "memcpy DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
      return "memcpy DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
      return "memcpy HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
      return "memcpy PtoP";
    default:
      return "memcpy";
  }
}

void add_kernel(const CUpti_ActivityKernel10& k, int64_t offset_ns, ActivityBatch& out) {
  KernelRecord r;
  r.device = int32_t(k.deviceId);
  r.stream = k.streamId;
  r.name = kernel_display_name(k.name);
  r.start_ns = on_our_clock(k.start, offset_ns);
  r.end_ns = on_our_clock(k.end, offset_ns);
  r.correlation = k.correlationId;
  r.kind = is_nccl_kernel(r.name) ? KernelKind::comm : KernelKind::compute;
  out.kernels.push_back(std::move(r));
}

// Copies: the NCCL copy-engine collectives (2.28+) run as memcpys; they are
// attributed to their collective through the correlation, not the name.
void add_copy(int32_t device, uint32_t stream, const char* name, uint64_t start, uint64_t end,
              uint32_t correlation, KernelKind kind, int64_t offset_ns, ActivityBatch& out) {
  KernelRecord r;
  r.device = device;
  r.stream = stream;
  r.name = name;
  r.start_ns = on_our_clock(start, offset_ns);
  r.end_ns = on_our_clock(end, offset_ns);
  r.correlation = correlation;
  r.kind = kind;
  out.kernels.push_back(std::move(r));
}

}  // namespace

bool is_nccl_kernel(std::string_view name) {
  for (std::string_view prefix : {"ncclDevKernel_", "ncclSymkDevKernel_", "ncclKernel_"})
    if (name.substr(0, prefix.size()) == prefix) return true;
  return false;
}

std::string kernel_display_name(const char* mangled) {
  if (!mangled || !*mangled) return "";
  int status = 0;
  char* demangled = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  std::string name = status == 0 && demangled ? demangled : mangled;
  std::free(demangled);
  // "void ncclDevKernel_X(ncclDevKernelArgs4K)" -> "ncclDevKernel_X": the return
  // type and arguments say nothing a reader of the report needs.
  if (name.rfind("void ", 0) == 0) name.erase(0, 5);
  if (auto paren = name.find('('); paren != std::string::npos && paren > 0) name.resize(paren);
  return name;
}

void convert(const CUpti_Activity* record, int64_t offset_ns, ActivityBatch& out) {
  switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      add_kernel(*reinterpret_cast<const CUpti_ActivityKernel10*>(record), offset_ns, out);
      break;
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      auto& m = *reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
      add_copy(int32_t(m.deviceId), m.streamId, memcpy_name(m.copyKind), m.start, m.end,
               m.correlationId, KernelKind::memcpy, offset_ns, out);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY2: {
      auto& m = *reinterpret_cast<const CUpti_ActivityMemcpyPtoP4*>(record);
      add_copy(int32_t(m.deviceId), m.streamId, "memcpy PtoP", m.start, m.end, m.correlationId,
               KernelKind::memcpy, offset_ns, out);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      auto& m = *reinterpret_cast<const CUpti_ActivityMemset4*>(record);
      add_copy(int32_t(m.deviceId), m.streamId, "memset", m.start, m.end, m.correlationId,
               KernelKind::memset, offset_ns, out);
      break;
    }
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
      auto& x = *reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(record);
      if (x.externalKind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0)
        out.links.push_back({x.correlationId, x.externalId});
      break;
    }
    case CUPTI_ACTIVITY_KIND_OVERHEAD: {
      auto& o = *reinterpret_cast<const CUpti_ActivityOverhead3*>(record);
      if (o.end > o.start) out.overhead_ns += o.end - o.start;
      break;
    }
    default:
      break;  // API records only carry the external correlation to us
  }
}

}  // namespace ddpscope::inject::cupti
