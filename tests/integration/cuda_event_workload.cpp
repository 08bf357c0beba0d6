// NCCL calls (the NCCL-ABI test library) on streams of the CUDA driver test
// double (fake_cuda_driver.cpp, loaded as libcuda.so.1), so that the
// injector's CUDA-event timer runs without a GPU. Each mode is one scenario of
// test_cuda_event_timer.cpp; what it prints is what the test checks.
#include <cuda.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "injector/nccl/nccl_api.h"

extern "C" void fakecuda_hold(CUstream);
extern "C" void fakecuda_release(CUstream);
extern "C" void fakecuda_elapsed_error(int);

namespace {

CUstream stream(int i) { return reinterpret_cast<CUstream>(uintptr_t(0x5000 + 16 * i)); }

long long now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

ncclComm_t g_comm;
float g_x[64];

// `n` all-reduces of `count` floats on `s` (count tells the phases apart).
ncclResult_t allreduces(int n, size_t count, CUstream s, ncclDataType_t dtype = ncclFloat32) {
  ncclResult_t last = ncclSuccess;
  for (int i = 0; i < n; ++i)
    last =
        ncclAllReduce(g_x, g_x, count, dtype, ncclSum, g_comm, reinterpret_cast<cudaStream_t>(s));
  return last;
}

// Work still running when the writer looks: its collectives stay pending, then
// are event-timed once the stream is released. Prints the release time.
int pending(int hold_ms) {
  fakecuda_hold(stream(1));
  allreduces(5, 1, stream(1));
  usleep(hold_ms * 1000);
  long long released = now_ns();
  fakecuda_release(stream(1));
  printf("released %lld\n", released);
  return 0;
}

// A stuck NCCL job: its all-reduces were enqueued and their stream never
// runs them (a peer that never came). Killed by the test.
int stuck() {
  fakecuda_hold(stream(1));
  allreduces(3, 2, stream(1));
  printf("enqueued\n");
  fflush(stdout);
  sleep(60);
  return 0;
}

// The same, but the job exits with the stream still stuck: the writer's last
// flush sees work that never ran.
int stuck_exit() {
  fakecuda_hold(stream(1));
  allreduces(3, 2, stream(1));
  return 0;
}

// The driver cannot time the events (a real error, not NOT_READY).
int elapsed_error() {
  fakecuda_elapsed_error(CUDA_ERROR_INVALID_HANDLE);
  allreduces(5, 1, stream(1));
  printf("ready\n");
  fflush(stdout);
  sleep(60);  // killed by the test
  return 0;
}

// Calls that give their timer slot back without an event: failed ones, and
// ones whose event a full ring dropped. Then, after the writer drained the
// ring, 10 more: they must still find free slots.
int slots(int pause_ms) {
  allreduces(2500, 1, stream(1), static_cast<ncclDataType_t>(99));  // refused by NCCL
  allreduces(2500, 1, stream(1));  // mostly dropped: a small ring, not drained yet
  usleep(pause_ms * 1000);
  allreduces(10, 2, stream(1));
  return 0;
}

// Another thread's capture in global mode while the writer polls pending
// events: the capture must end as it would without us.
int capture_global(int hold_ms) {
  fakecuda_hold(stream(2));
  allreduces(3, 1, stream(2));  // pending: polled at every flush
  CUresult end = CUDA_ERROR_UNKNOWN;
  std::thread capturer([&] {
    CUgraph graph;
    if (cuStreamBeginCapture(stream(1), CU_STREAM_CAPTURE_MODE_GLOBAL) != CUDA_SUCCESS) return;
    usleep(hold_ms * 1000);
    end = cuStreamEndCapture(stream(1), &graph);
    if (end == CUDA_SUCCESS) cuGraphDestroy(graph);
  });
  capturer.join();
  fakecuda_release(stream(2));
  printf("end capture %d\n", int(end));
  return 0;
}

// Collectives captured into a graph (they run at its launches), then two that
// run now.
int captured() {
  CUgraph graph;
  if (cuStreamBeginCapture(stream(1), CU_STREAM_CAPTURE_MODE_GLOBAL) != CUDA_SUCCESS) return 90;
  allreduces(4, 1, stream(1));
  usleep(300000);  // several flushes while capturing
  CUresult end = cuStreamEndCapture(stream(1), &graph);
  printf("end capture %d\n", int(end));
  if (end == CUDA_SUCCESS) cuGraphDestroy(graph);
  allreduces(2, 2, stream(2));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "";
  int a = argc > 2 ? atoi(argv[2]) : 0;
  if (ncclCommInitAll(&g_comm, 1, nullptr) != ncclSuccess) return 91;
  int rc = 2;
  if (mode == "pending") rc = pending(a);
  if (mode == "stuck") rc = stuck();
  if (mode == "stuck-exit") rc = stuck_exit();
  if (mode == "elapsed-error") rc = elapsed_error();
  if (mode == "slots") rc = slots(a);
  if (mode == "capture-global") rc = capture_global(a);
  if (mode == "captured") rc = captured();
  if (rc == 2)
    fprintf(stderr,
            "usage: cuda_event_workload pending MS|stuck|stuck-exit|elapsed-error|slots MS|"
            "capture-global MS|captured\n");
  ncclCommDestroy(g_comm);
  return rc;
}
