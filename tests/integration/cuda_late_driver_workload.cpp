// A job that loads the CUDA driver late: its first NCCL call starts the
// injector before any driver is there, several flushes pass, then the driver
// (the test double, argv[1]) is loaded and collectives run on a stream. They
// must be timed with CUDA events: the timer may not be settled before the job
// has a driver.
#include <dlfcn.h>
#include <unistd.h>

#include <cstdint>

#include "injector/nccl/nccl_api.h"

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  ncclComm_t comm;
  if (ncclCommInitAll(&comm, 1, nullptr) != ncclSuccess) return 90;
  usleep(300000);  // the writer flushes meanwhile
  if (!dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL)) return 91;
  float x[4] = {};
  auto stream = reinterpret_cast<cudaStream_t>(uintptr_t(0x7000));
  for (int i = 0; i < 3; ++i)
    if (ncclAllReduce(x, x, 4, ncclFloat32, ncclSum, comm, stream) != ncclSuccess) return 92;
  ncclCommDestroy(comm);
  return 0;
}
