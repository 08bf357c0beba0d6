// A program linked against the real shared libcudart that makes the CUDA
// waits ddpscope records, on the runtime's special stream handles (valid on
// any machine), and prints what each returned. With no GPU or driver every
// call fails quickly; the test checks the injector hands back the same codes.
#include <cuda_runtime_api.h>

#include <cstdio>

int per_thread_stream_synchronize();  // cuda_sync_ptsz.cpp: the _ptsz entry points
int per_thread_stream_wait_event();

int main() {
  int rc[6] = {cudaStreamSynchronize(cudaStreamPerThread),
               cudaDeviceSynchronize(),
               cudaEventSynchronize(nullptr),
               cudaStreamWaitEvent(cudaStreamLegacy, nullptr, 0),
               per_thread_stream_synchronize(),
               per_thread_stream_wait_event()};
  printf("cudaStreamSynchronize %d\ncudaDeviceSynchronize %d\n", rc[0], rc[1]);
  printf("cudaEventSynchronize %d\ncudaStreamWaitEvent %d\n", rc[2], rc[3]);
  printf("cudaStreamSynchronize_ptsz %d\ncudaStreamWaitEvent_ptsz %d\n", rc[4], rc[5]);
  return 0;
}
