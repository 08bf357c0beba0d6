// A stand-in for torch's CUDA extension: a shared library linked against the
// real libcudart that makes the four CUDA waits. cuda_plugin_workload loads it
// RTLD_LOCAL, as Python loads torch, so libcudart is not in the global scope
// and dlsym(RTLD_NEXT) cannot find the real functions behind the hooks.
#include <cuda_runtime_api.h>

extern "C" __attribute__((visibility("default"))) void run_cuda_waits(int rc[4]) {
  rc[0] = cudaStreamSynchronize(cudaStreamPerThread);
  rc[1] = cudaDeviceSynchronize();
  rc[2] = cudaEventSynchronize(nullptr);
  rc[3] = cudaStreamWaitEvent(cudaStreamLegacy, nullptr, 0);
}
