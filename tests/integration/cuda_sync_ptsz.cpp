// The same waits as compiled with nvcc --default-stream per-thread: the
// runtime header then names the _ptsz entry points, which ddpscope hooks too.
#define CUDA_API_PER_THREAD_DEFAULT_STREAM 1
#include <cuda_runtime_api.h>

int per_thread_stream_synchronize() { return cudaStreamSynchronize(cudaStreamPerThread); }
int per_thread_stream_wait_event() { return cudaStreamWaitEvent(cudaStreamLegacy, nullptr, 0); }
