// A flood of CUDA waits, then collectives, from one thread: linked against the
// real shared libcudart (every wait fails at once without a driver, and is
// still recorded) and the NCCL-ABI test library. Under a small ring that is
// never drained before exit, the waits fill the ring; the collectives after
// them must still be recorded (thread_buffer.h: the communication reserve).
//
//   cuda_flood_workload WAITS COLLECTIVES
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>

#include "injector/nccl/nccl_api.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: cuda_flood_workload WAITS COLLECTIVES\n");
    return 2;
  }
  int waits = atoi(argv[1]), collectives = atoi(argv[2]);
  for (int i = 0; i < waits; ++i) cudaStreamWaitEvent(cudaStreamLegacy, nullptr, 0);
  ncclComm_t comm;
  if (ncclCommInitAll(&comm, 1, nullptr) != ncclSuccess) return 90;
  float x[16] = {};
  for (int i = 0; i < collectives; ++i)
    if (ncclAllReduce(x, x, 16, ncclFloat32, ncclSum, comm, nullptr) != ncclSuccess) return 91;
  return 0;
}
