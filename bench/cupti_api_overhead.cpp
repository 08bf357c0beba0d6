// Host time CUPTI's API activity adds to every CUDA call of the job. The
// injector enables CUPTI's RUNTIME and DRIVER kinds because the external
// correlation records that tie kernels to collectives hang off API records;
// those kinds record every CUDA call of the job, NCCL's or not. This times
// cheap driver calls (cuStreamQuery + cuEventRecord, as a framework makes in
// bulk) and a launching one (cuMemsetD8Async) under four CUPTI setups:
//
//   none      no CUPTI
//   injector  the injector's tracer as it runs in a job (every kind it enables)
//   device    the same without RUNTIME and DRIVER (no API records: no links)
//   launches  device kinds + API records for launching/copying calls only
//             (cuptiActivityEnableDriverApi/RuntimeApi), the candidate setup
//
// and, for each setup, whether a call made inside a pushed correlation id is
// still linked to it (what the injector needs). Needs a GPU and driver;
// elsewhere it says so. Its figures on a GPU: docs/tested.md.
//
//   bench_cupti_api_overhead [CALLS]      (default 200,000 per loop)
#include <cuda.h>
#include <cupti.h>
#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "injector/runtime/device_tracer.h"
#include "profiler/core/clock.h"

namespace ddpscope::inject {
DeviceTracer* make_cupti_tracer(const char** why);  // injector/cupti/cupti_tracer.cpp
}

namespace {

using ddpscope::inject::ActivityBatch;
using ddpscope::inject::DeviceTracer;

struct Driver {
  decltype(&cuStreamCreate) stream_create;
  decltype(&cuStreamQuery) stream_query;
  decltype(&cuEventCreate) event_create;
  decltype(&cuEventRecord) event_record;
  decltype(&cuMemAlloc) mem_alloc;
  decltype(&cuMemsetD8Async) memset_async;
  decltype(&cuStreamSynchronize) stream_sync;
  CUstream stream;
  CUevent event;
  CUdeviceptr buffer;
};

// A context on device 0, the way a job has one, and what the loops use.
bool open_device(Driver& d) {
  void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
  if (!h) return false;
  auto sym = [&](auto& fn, const char* name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(h, name));
    return fn != nullptr;
  };
  decltype(&cuInit) init;
  decltype(&cuDeviceGet) get;
  decltype(&cuDevicePrimaryCtxRetain) retain;
  decltype(&cuCtxSetCurrent) set;
  // Names as cuda.h maps them (versioned symbols).
#define DDPSCOPE_STR(x) #x
#define DDPSCOPE_SYM(x) DDPSCOPE_STR(x)
  bool ok = sym(init, DDPSCOPE_SYM(cuInit)) && sym(get, DDPSCOPE_SYM(cuDeviceGet)) &&
            sym(retain, DDPSCOPE_SYM(cuDevicePrimaryCtxRetain)) &&
            sym(set, DDPSCOPE_SYM(cuCtxSetCurrent)) &&
            sym(d.stream_create, DDPSCOPE_SYM(cuStreamCreate)) &&
            sym(d.stream_query, DDPSCOPE_SYM(cuStreamQuery)) &&
            sym(d.event_create, DDPSCOPE_SYM(cuEventCreate)) &&
            sym(d.event_record, DDPSCOPE_SYM(cuEventRecord)) &&
            sym(d.mem_alloc, DDPSCOPE_SYM(cuMemAlloc)) &&
            sym(d.memset_async, DDPSCOPE_SYM(cuMemsetD8Async)) &&
            sym(d.stream_sync, DDPSCOPE_SYM(cuStreamSynchronize));
#undef DDPSCOPE_SYM
#undef DDPSCOPE_STR
  CUdevice dev;
  CUcontext ctx;
  return ok && init(0) == CUDA_SUCCESS && get(&dev, 0) == CUDA_SUCCESS &&
         retain(&ctx, dev) == CUDA_SUCCESS && set(ctx) == CUDA_SUCCESS &&
         d.stream_create(&d.stream, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS &&
         d.event_create(&d.event, CU_EVENT_DEFAULT) == CUDA_SUCCESS &&
         d.mem_alloc(&d.buffer, 4096) == CUDA_SUCCESS;
}

// The CUPTI the tracer loaded, for the kinds this bench switches itself.
struct Cupti {
  decltype(&cuptiActivityEnable) enable;
  decltype(&cuptiActivityDisable) disable;
  decltype(&cuptiActivityEnableDriverApi) driver_api;
  decltype(&cuptiActivityEnableRuntimeApi) runtime_api;
};

int find_cupti(dl_phdr_info* info, size_t, void* out) {
  if (!info->dlpi_name || !strstr(info->dlpi_name, "libcupti.so")) return 0;
  *static_cast<std::string*>(out) = info->dlpi_name;
  return 1;
}

bool load_cupti(Cupti& c) {
  std::string path;
  dl_iterate_phdr(find_cupti, &path);
  void* h = path.empty() ? nullptr : dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (!h) return false;
  c.enable = reinterpret_cast<decltype(c.enable)>(dlsym(h, "cuptiActivityEnable"));
  c.disable = reinterpret_cast<decltype(c.disable)>(dlsym(h, "cuptiActivityDisable"));
  c.driver_api = reinterpret_cast<decltype(c.driver_api)>(dlsym(h, "cuptiActivityEnableDriverApi"));
  c.runtime_api =
      reinterpret_cast<decltype(c.runtime_api)>(dlsym(h, "cuptiActivityEnableRuntimeApi"));
  return c.enable && c.disable;
}

// The calls that launch or copy: what an NCCL call makes inside its pushed id.
constexpr CUpti_CallbackId kDriverLaunches[] = {
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoDAsync_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD8Async};
constexpr CUpti_CallbackId kRuntimeLaunches[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000,
    CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000,
    CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_ptsz_v7000};

// Median ns per iteration of `body`, in batches of 1,000; the tracer's
// buffers are handed back between batches (not timed), as flushes would.
template <typename Body>
double median_ns(long calls, DeviceTracer* tracer, Body&& body) {
  constexpr long kBatch = 1000;
  std::vector<double> per;
  ActivityBatch drained;
  for (long done = 0; done < calls; done += kBatch) {
    int64_t t0 = ddpscope::clock::monotonic_ns();
    for (long i = 0; i < kBatch; ++i) body();
    per.push_back(double(ddpscope::clock::monotonic_ns() - t0) / kBatch);
    if (tracer && done % (50 * kBatch) == 0) tracer->collect(drained), drained.clear();
  }
  std::nth_element(per.begin(), per.begin() + per.size() / 2, per.end());
  return per[per.size() / 2];
}

// Whether a launching call inside a pushed id comes back linked to it.
bool links_arrive(Driver& d, DeviceTracer* tracer, uint64_t id) {
  tracer->push_correlation(id);
  d.memset_async(d.buffer, 0, 64, d.stream);
  tracer->pop_correlation();
  d.stream_sync(d.stream);
  ActivityBatch batch;
  tracer->collect(batch);
  for (auto& l : batch.links)
    if (l.external == id) return true;
  return false;
}

void row(const char* setup, Driver& d, DeviceTracer* tracer, long calls, uint64_t id) {
  double cheap = median_ns(calls, tracer, [&] {
    d.stream_query(d.stream);
    d.event_record(d.event, d.stream);
  });
  double launch = median_ns(calls / 10, tracer, [&] { d.memset_async(d.buffer, 0, 64, d.stream); });
  d.stream_sync(d.stream);
  const char* linked = !tracer ? "-" : links_arrive(d, tracer, id) ? "yes" : "NO";
  std::printf("%-10s %22.1f %22.1f %8s\n", setup, cheap / 2, launch, linked);
}

}  // namespace

int main(int argc, char** argv) {
  long calls = argc > 1 ? std::atol(argv[1]) : 200000;
  Driver d{};
  if (!open_device(d)) {
    std::printf("bench_cupti_api_overhead: no CUDA driver or device here; run it on a GPU\n");
    return 0;
  }
  std::printf("host ns per CUDA driver call, median of batches of 1000 (%ld calls)\n", calls);
  std::printf("%-10s %22s %22s %8s\n", "setup", "StreamQuery/EventRecord", "MemsetD8Async",
              "linked");
  row("none", d, nullptr, calls, 0);
  const char* why = nullptr;
  DeviceTracer* tracer = ddpscope::inject::make_cupti_tracer(&why);
  Cupti c{};
  if (!tracer || !load_cupti(c)) {
    std::printf("CUPTI tracing did not start: %s\n", why ? why : "libcupti not found");
    return 0;
  }
  row("injector", d, tracer, calls, 1);
  c.disable(CUPTI_ACTIVITY_KIND_RUNTIME);
  c.disable(CUPTI_ACTIVITY_KIND_DRIVER);
  row("device", d, tracer, calls, 2);
  if (!c.driver_api || !c.runtime_api) {
    std::printf("launches: this CUPTI has no cuptiActivityEnableDriverApi/RuntimeApi\n");
  } else {
    for (CUpti_CallbackId id : kDriverLaunches) c.driver_api(id, 1);
    for (CUpti_CallbackId id : kRuntimeLaunches) c.runtime_api(id, 1);
    row("launches", d, tracer, calls, 3);
  }
  tracer->stop();
  return 0;
}
