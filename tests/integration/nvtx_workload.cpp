// A program that marks its work with NVTX3 (header-only, as torch and most
// apps use it), for the NVTX injection tests: nested push/pop, a wide name, a
// domain with a registered string, ranges of two domains popped out of order,
// and start/end ranges that end on another thread. It prints its thread ids
// and what NVTX returned, so the test can check both against the database.
#include <nvtx3/nvToolsExt.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
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

}  // namespace

int main() {
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
  return 0;
}
