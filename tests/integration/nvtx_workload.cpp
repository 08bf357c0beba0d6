// A program that marks its work with NVTX3 (header-only, as torch and most
// apps use it), for the NVTX injection tests: nested push/pop, a wide name, a
// domain with a registered string, ranges of two domains popped out of order,
// start/end ranges that end on another thread (and ends of unknown or already
// ended ids, which must be ignored). It prints its thread ids and what NVTX
// returned, so the test can check both against the database.
//
//   nvtx_workload            the ranges above
//   nvtx_workload deep N     one thread nests N push/pop ranges named "d<level>"
//   nvtx_workload hog LIB N  dlopen()s LIB first (static_tls_hog), then deep N
#include <dlfcn.h>
#include <nvtx3/nvToolsExt.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <thread>

namespace {

long tid() { return syscall(SYS_gettid); }

nvtxEventAttributes_t attributes() {
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  return a;
}

nvtxEventAttributes_t ascii(const char* name) {
  nvtxEventAttributes_t a = attributes();
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = name;
  return a;
}

nvtxEventAttributes_t registered(nvtxStringHandle_t name) {
  nvtxEventAttributes_t a = attributes();
  a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  a.message.registered = name;
  return a;
}

// Pushes N nested ranges, then pops them; prints the levels NVTX returned.
int deep(int n) {
  printf("push");
  for (int i = 0; i < n; ++i) printf(" %d", nvtxRangePushA(("d" + std::to_string(i)).c_str()));
  printf("\npop");
  for (int i = 0; i < n; ++i) printf(" %d", nvtxRangePop());
  printf("\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 2 && std::string(argv[1]) == "deep") return deep(std::stoi(argv[2]));
  if (argc > 3 && std::string(argv[1]) == "hog") {
    if (!dlopen(argv[2], RTLD_NOW | RTLD_LOCAL)) return 3;
    return deep(std::stoi(argv[3]));  // NVTX loads its tool at the first call
  }
  printf("main %ld\n", tid());
  // step { forward, backward-ü (wide) }
  int step = nvtxRangePushA("step");
  int forward = nvtxRangePushA("forward");
  nvtxRangePop();
  int backward = nvtxRangePushW(L"backward-\u00fc");
  nvtxRangePop();
  int step_end = nvtxRangePop();
  printf("levels %d %d %d %d\n", step, forward, backward, step_end);

  nvtxDomainHandle_t ddp = nvtxDomainCreateA("ddp");
  nvtxStringHandle_t bucket = nvtxDomainRegisterStringA(ddp, "bucket");
  nvtxEventAttributes_t bucket_attr = registered(bucket);
  nvtxDomainRangePushEx(ddp, &bucket_attr);
  nvtxDomainRangePop(ddp);

  // Two domains' stacks are independent: popping the default domain ends
  // "outer" although "inner" (domain ddp) was pushed after it.
  nvtxEventAttributes_t outer = ascii("outer");
  nvtxRangePushEx(&outer);
  nvtxEventAttributes_t inner = ascii("inner");
  nvtxDomainRangePushEx(ddp, &inner);
  nvtxRangePop();
  nvtxDomainRangePop(ddp);
  printf("unbalanced %d\n", nvtxRangePop());

  // Start on main, end on a worker; start on the worker, end on main.
  nvtxRangeId_t load = nvtxRangeStartA("load");
  nvtxRangeId_t prefetch = 0;
  std::thread worker([&] {
    printf("worker %ld\n", tid());
    nvtxRangeEnd(load);
    nvtxEventAttributes_t a = ascii("prefetch");
    prefetch = nvtxDomainRangeStartEx(ddp, &a);
  });
  worker.join();
  nvtxDomainRangeEnd(ddp, prefetch);
  nvtxRangeEnd(load);         // ended already
  nvtxRangeEnd(load + 4096);  // never started (same slot as load)
  return 0;
}
