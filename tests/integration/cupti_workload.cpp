// NCCL calls (the NCCL-ABI test library) with the injector's CUPTI tracer
// running against test doubles of the CUDA driver (fake_cuda_driver.cpp) and
// of CUPTI (fake_cupti.cpp), so that its buffers and its life cycle are tested
// without a GPU. Each mode is one scenario of test_cupti_tracer.cpp; what it
// prints is what the test checks.
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "injector/nccl/nccl_api.h"

extern "C" int fakecupti_request(int n);
extern "C" int fakecupti_enabled_kinds();

namespace {

ncclComm_t g_comm;  // its creation starts the injector's tracer
float g_x[16];

void allreduces(int n) {
  for (int i = 0; i < n; ++i) ncclAllReduce(g_x, g_x, 4, ncclFloat32, ncclSum, g_comm, nullptr);
}

// CUPTI asks for `n` buffers before a flush hands any back, then, after
// `pause_ms` (flushes), for 4 more.
int buffers(int n, int pause_ms) {
  printf("granted %d\n", fakecupti_request(n));
  usleep(pause_ms * 1000);
  printf("granted %d\n", fakecupti_request(4));
  return 0;
}

off_t size_of(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 ? st.st_size : 0;
}

// The rank file stops growing (a file-size limit, as a full disk would): the
// recording stops, and so must CUPTI's tracing. Waits `pause_ms` around it.
int write_fails(int pause_ms) {
  allreduces(10);
  usleep(pause_ms * 1000);  // the file exists, with what came so far
  std::string file = std::string(getenv("DDPSCOPE_OUT")) + "/rank-0.db";
  off_t now = std::max(size_of(file), size_of(file + "-wal"));
  signal(SIGXFSZ, SIG_IGN);  // writes past the limit fail with EFBIG instead
  rlimit limit{rlim_t(now), rlim_t(now)};
  if (setrlimit(RLIMIT_FSIZE, &limit) != 0) return 92;
  allreduces(3000);
  usleep(pause_ms * 1000);
  printf("cupti kinds enabled: %d\n", fakecupti_enabled_kinds());
  return 0;
}

// A stuck NCCL job under CUPTI: one process drives both ranks of a 2-rank
// communicator (a group per all-reduce, as with ncclCommInitAll), and the
// double's CUPTI never delivers a record, as for kernels that never end.
// Killed by the test.
int stuck() {
  ncclComm_t pair[2];
  if (ncclCommInitAll(pair, 2, nullptr) != ncclSuccess) return 93;
  for (int i = 0; i < 3; ++i) {
    ncclGroupStart();
    for (ncclComm_t c : pair) ncclAllReduce(g_x, g_x, 2, ncclFloat32, ncclSum, c, nullptr);
    ncclGroupEnd();
  }
  printf("enqueued\n");
  fflush(stdout);
  sleep(120);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "";
  int a = argc > 2 ? atoi(argv[2]) : 0, b = argc > 3 ? atoi(argv[3]) : 0;
  if (ncclCommInitAll(&g_comm, 1, nullptr) != ncclSuccess) return 91;
  printf("cupti kinds enabled: %d\n", fakecupti_enabled_kinds());
  int rc = 2;
  if (mode == "buffers") rc = buffers(a, b);
  if (mode == "write-fails") rc = write_fails(a);
  if (mode == "stuck") rc = stuck();
  if (rc == 2) fprintf(stderr, "usage: cupti_workload buffers N MS|write-fails MS|stuck\n");
  ncclCommDestroy(g_comm);
  return rc;
}
