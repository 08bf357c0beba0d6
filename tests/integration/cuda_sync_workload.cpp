// A program linked against the real shared libcudart that makes the four CUDA
// waits ddpscope records, on the runtime's special stream handles (valid on
// any machine), and prints what each returned. With no GPU or driver every
// call fails quickly; the test checks the injector hands back the same codes.
#include <cuda_runtime_api.h>

#include <cstdio>

int main() {
  int rc_stream = cudaStreamSynchronize(cudaStreamPerThread);
  int rc_device = cudaDeviceSynchronize();
  int rc_event = cudaEventSynchronize(nullptr);
  int rc_wait = cudaStreamWaitEvent(cudaStreamLegacy, nullptr, 0);
  printf("cudaStreamSynchronize %d\ncudaDeviceSynchronize %d\n", rc_stream, rc_device);
  printf("cudaEventSynchronize %d\ncudaStreamWaitEvent %d\n", rc_event, rc_wait);
  return 0;
}
