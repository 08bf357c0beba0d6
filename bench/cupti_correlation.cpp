// Host time the CUPTI correlation adds to each NCCL call: the injector pushes
// our external correlation id before the real call and pops it after, so that
// CUPTI ties the kernels it launches to the collective. This times that
// push/pop pair through our CuptiActivityApi with tracing running on a real
// GPU, against an empty loop. Needs a GPU and driver; elsewhere it says so.
//
//   bench_cupti_correlation [PAIRS]      (default 1,000,000)
#include <cuda.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "injector/runtime/device_tracer.h"
#include "profiler/core/clock.h"

namespace ddpscope::inject {
DeviceTracer* make_cupti_tracer(const char** why);  // injector/cupti/cupti_tracer.cpp
}

namespace {

// A context on device 0, the way a job has one before its first NCCL call.
bool open_device() {
  void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
  if (!h) return false;
  auto init = reinterpret_cast<CUresult (*)(unsigned)>(dlsym(h, "cuInit"));
  auto get = reinterpret_cast<CUresult (*)(CUdevice*, int)>(dlsym(h, "cuDeviceGet"));
  auto retain =
      reinterpret_cast<CUresult (*)(CUcontext*, CUdevice)>(dlsym(h, "cuDevicePrimaryCtxRetain"));
  auto set = reinterpret_cast<CUresult (*)(CUcontext)>(dlsym(h, "cuCtxSetCurrent"));
  CUdevice dev;
  CUcontext ctx;
  return init && get && retain && set && init(0) == CUDA_SUCCESS && get(&dev, 0) == CUDA_SUCCESS &&
         retain(&ctx, dev) == CUDA_SUCCESS && set(ctx) == CUDA_SUCCESS;
}

double median_ns_per_pair(ddpscope::inject::DeviceTracer* tracer, long pairs) {
  constexpr long kBatch = 1000;
  std::vector<double> per;
  for (long done = 0; done < pairs; done += kBatch) {
    int64_t t0 = ddpscope::clock::monotonic_ns();
    for (long i = 0; i < kBatch; ++i) {
      if (tracer) {
        tracer->push_correlation(uint64_t(done + i + 1));
        tracer->pop_correlation();
      }
      asm volatile("" ::: "memory");
    }
    per.push_back(double(ddpscope::clock::monotonic_ns() - t0) / kBatch);
  }
  std::nth_element(per.begin(), per.begin() + per.size() / 2, per.end());
  return per[per.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  long pairs = argc > 1 ? std::atol(argv[1]) : 1000000;
  if (!open_device()) {
    std::printf(
        "bench_cupti_correlation: no CUDA driver or device here; run it on a GPU machine\n");
    return 0;
  }
  const char* why = nullptr;
  auto* tracer = ddpscope::inject::make_cupti_tracer(&why);
  if (!tracer) {
    std::printf("bench_cupti_correlation: CUPTI tracing did not start: %s\n", why);
    return 0;
  }
  double empty = median_ns_per_pair(nullptr, pairs);
  double with = median_ns_per_pair(tracer, pairs);
  std::printf(
      "correlation push+pop per NCCL call: %.1f ns (loop alone %.1f ns, %ld pairs, "
      "median of batches of 1000)\n",
      with - empty, empty, pairs);
  ddpscope::inject::ActivityBatch batch;
  tracer->stop();
  tracer->collect(batch);
  std::printf("records after: %zu kernels, %zu links, %llu dropped\n", batch.kernels.size(),
              batch.links.size(), (unsigned long long)batch.dropped);
  return 0;
}
