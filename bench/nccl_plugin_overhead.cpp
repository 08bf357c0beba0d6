// Host cost of ddpscope's NCCL profiler plugin callbacks (issue 16 item 5).
//
// Loads libddpscope_inject.so as NCCL's loader does (dlopen, dlsym
// "ncclProfiler_v5"), initialises it with DDPSCOPE_OUT on a temporary
// directory, and times, in batches on one thread: a collective's start+stop
// pair, a proxy op's start + one state + stop, and a proxy step's start +
// three states + stop (what NCCL calls per network step). Reports the median
// ns per event over batches (min and max beside it). Target: <= 100 ns per
// event. The writer thread drains the rings meanwhile, as in a job; the ring
// is faulted in before timing (steady state, as in a job past its first
// few thousand events).
//
// usage: bench_nccl_plugin_overhead [--batches N] [--events-per-batch N]
#include <dlfcn.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "injector/nccl_profiler/profiler_abi.h"
#include "tests/support/built_path.h"

using namespace ddpscope::inject::nccl_profiler;

namespace {

using Clock = std::chrono::steady_clock;

struct Bench {
  const ProfilerV5* p = nullptr;
  void* ctx = nullptr;
  int mask = 0;
  // NCCL fills a proxy op's pid from its own cached value; getpid() is a
  // system call (glibc no longer caches it), which the timed loop must not pay.
  pid_t pid = getpid();

  void* start(EventDescrV5& d) {
    void* h = nullptr;
    p->startEvent(ctx, &h, &d);
    return h;
  }
  void* coll(uint64_t seq) {
    EventDescrV5 d{};
    d.type = kColl;
    d.coll.seqNumber = seq;
    d.coll.func = "AllReduce";
    d.coll.count = 1 << 20;
    d.coll.datatype = "ncclFloat32";
    d.coll.nChannels = 4;
    d.coll.nWarps = 16;
    d.coll.algo = "RING";
    d.coll.proto = "SIMPLE";
    return start(d);
  }
  void* op(void* parent) {
    EventDescrV5 d{};
    d.type = kProxyOp;
    d.parentObj = parent;
    d.proxyOp = {pid, 0, 1, 8, 4096, 1};
    return start(d);
  }
  void* step(void* parent, int s) {
    EventDescrV5 d{};
    d.type = kProxyStep;
    d.parentObj = parent;
    d.proxyStep.step = s;
    return start(d);
  }
  void state(void* h, int s) {
    EventStateArgs a{};
    a.proxyStep.transSize = 4096;
    p->recordEventState(h, EventState(s), &a);
  }
};

// ns per event of `body(i)` run n times, per batch.
template <typename Body>
std::vector<double> time_batches(int batches, int n, Body body) {
  std::vector<double> ns;
  for (int b = 0; b < batches; ++b) {
    auto t0 = Clock::now();
    for (int i = 0; i < n; ++i) body(i);
    // Long pauses let the writer thread drain (as flushes do in a job).
    ns.push_back(std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / n);
    usleep(20000);
  }
  std::sort(ns.begin(), ns.end());
  return ns;
}

// `callbacks`: how many plugin calls NCCL makes for one such event.
void print(const char* what, int callbacks, const std::vector<double>& ns) {
  double median = ns[ns.size() / 2];
  printf("%-38s median %6.1f ns per event, %5.1f per callback  (batches: %.1f .. %.1f)\n", what,
         median, median / callbacks, ns.front(), ns.back());
}

}  // namespace

int main(int argc, char** argv) {
  int batches = 51, n = 2000;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--batches")) batches = atoi(argv[i + 1]);
    if (!strcmp(argv[i], "--events-per-batch")) n = atoi(argv[i + 1]);
  }
  std::string dir = std::filesystem::temp_directory_path() /
                    ("ddpscope-plugin-bench-" + std::to_string(getpid()));
  setenv("DDPSCOPE_OUT", dir.c_str(), 1);
  setenv("DDPSCOPE_RANK", "0", 1);
  setenv("DDPSCOPE_QUIET", "1", 1);
  // Removed after the injector closed its rank file at exit: handlers run in
  // reverse order of registration, and the injector registers its own later.
  static std::string cleanup;
  cleanup = dir;
  atexit([] { std::filesystem::remove_all(cleanup); });
  void* lib = dlopen(INJECT_LIB, RTLD_NOW | RTLD_LOCAL);  // as NCCL opens its plugins
  if (!lib) return fprintf(stderr, "%s\n", dlerror()), 1;
  Bench b;
  b.p = static_cast<const ProfilerV5*>(dlsym(lib, "ncclProfiler_v5"));
  if (!b.p || b.p->init(&b.ctx, 0x1234, &b.mask, "bench", 1, 2, 0, nullptr) != 0) return 1;
  printf("ncclProfiler_v5 from %s, mask %d, %d batches of %d\n", INJECT_LIB, b.mask, batches, n);
  uint64_t seq = 0;
  // Untimed: one pass over the whole ring first. A thread's ring is 64 Ki
  // events of 112 bytes; the first pass faults its 7 MiB in page by page
  // (once per thread in a job's life), which is not the per-event cost.
  // The slot pools (up to 16 Ki events each) likewise.
  for (int i = 0; i < 70000; ++i) b.p->stopEvent(b.coll(seq++));
  usleep(300000);
  void* warm_parent = b.coll(seq++);
  for (int i = 0; i < 20000; ++i) {
    void* op = b.op(warm_parent);
    b.p->stopEvent(b.step(op, i));
    b.p->stopEvent(op);
  }
  b.p->stopEvent(warm_parent);
  usleep(300000);
  print("collective: start + stop", 2,
        time_batches(batches, n, [&](int) { b.p->stopEvent(b.coll(seq++)); }));
  void* parent = b.coll(seq++);
  print("proxy op: start + 1 state + stop", 3, time_batches(batches, n, [&](int) {
          void* op = b.op(parent);
          b.state(op, kOpInProgress);
          b.p->stopEvent(op);
        }));
  void* op = b.op(parent);
  print("proxy step: start + 3 states + stop", 5, time_batches(batches, n, [&](int i) {
          void* st = b.step(op, i);
          b.state(st, kStepSendGpuWait);
          b.state(st, kStepSendPeerWait);
          b.state(st, kStepSendWait);
          b.p->stopEvent(st);
        }));
  b.p->stopEvent(op);
  b.p->stopEvent(parent);
  b.p->finalize(b.ctx);
  return 0;
}
