// Plays NCCL for ddpscope's profiler plugin: dlopen()s the library argv[1]
// names, looks up "ncclProfiler_<argv[2]>" (v6, v5 or v4) as NCCL's loader does,
// and feeds it the events of one DDP-like step on one communicator: three
// all-reduces of one group (different algorithms, protocols and channel
// counts) started on the main thread, their kernel channels, proxy
// operations and network steps on a proxy thread, stops out of order, a collective's proxy ops
// starting after the collective's own stop (as NCCL's proxy thread does), and
// a proxy op of another process whose parent handle is not ours. Under v6,
// also an all-gather NCCL runs on the copy engines (kCeGather): its ceColl,
// a ready sync, a copy batch and a completion sync, while all-reduce 9 is
// still open, and a CE step whose parent is no handle of ours.
#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "injector/nccl_profiler/profiler_abi.h"

using namespace ddpscope::inject::nccl_profiler;

namespace {

constexpr uint64_t kCommHash = 0xabcdef0123456789ull;  // high bit set: stored as negative
constexpr int kRank = 1, kNranks = 4, kSteps = 3;
constexpr uint64_t kGpuTimer = 1'700'000'000'000'000'000ull;  // the GPU's clock: not the host's

struct Coll {
  uint64_t seq;
  const char *algo, *proto;
  uint8_t nchannels, nwarps;
  size_t count;
};
const Coll kColls[] = {{7, "RING", "LL", 2, 8, 1024},
                       {8, "TREE", "LL128", 4, 16, 1 << 20},
                       {9, "RING", "SIMPLE", 8, 32, 25 << 20}};
// NCCL's copy-engine sequence when the all-gather starts, its elements, and
// the bytes its one batch copies (one copy per peer).
constexpr uint64_t kCeSeq = 42;
constexpr size_t kCeCount = 3 << 20;
constexpr size_t kCeBatchBytes = kCeCount * 2 * (kNranks - 1);

template <typename Profiler, typename Descr>
struct Nccl {
  const Profiler* p;
  void* ctx = nullptr;
  int mask = 0;

  void* start(Descr& d) {
    void* h = nullptr;
    if (mask & int(d.type)) p->startEvent(ctx, &h, &d);  // NCCL skips types not asked for
    return h;
  }
  void* coll(const Coll& c) {
    Descr d{};
    d.type = kColl;
    d.rank = kRank;
    d.coll.seqNumber = c.seq;
    d.coll.func = "AllReduce";
    d.coll.count = c.count;
    d.coll.root = 0;
    d.coll.datatype = "ncclFloat32";
    d.coll.nChannels = c.nchannels;
    d.coll.nWarps = c.nwarps;
    d.coll.algo = c.algo;
    d.coll.proto = c.proto;
    return start(d);
  }
  void* op(void* parent, pid_t pid, int channel, bool send) {
    Descr d{};
    d.type = kProxyOp;
    d.parentObj = parent;
    d.rank = kRank;
    d.proxyOp = {pid,    uint8_t(channel),     send ? (kRank + 1) % kNranks : (kRank + 3) % kNranks,
                 kSteps, 4096 * (channel + 1), send};
    return start(d);
  }
  void* step(void* parent, int step) {
    Descr d{};
    d.type = kProxyStep;
    d.parentObj = parent;
    d.rank = kRank;
    d.proxyStep.step = step;
    return start(d);
  }
  // A channel of the collective's kernel: GPU timer start, then stop 500 ns on.
  void kernel_channel(void* coll, const Coll& c, int channel) {
    Descr d{};
    d.type = kKernelCh;
    d.parentObj = coll;
    d.rank = kRank;
    d.kernelCh.channelId = uint8_t(channel);
    d.kernelCh.pTimer = kGpuTimer + c.seq * 1000000 + uint64_t(channel) * 1000;
    void* h = start(d);
    EventStateArgs a{};
    a.kernelCh.pTimer = d.kernelCh.pTimer + 500;
    if (h) p->recordEventState(h, kKernelChStop, &a);
    stop(h);
  }
  // Only v6's descriptor has the copy-engine events.
  void* ce_gather() {
    Descr d{};
    d.type = kCeColl;
    d.rank = kRank;
    d.ceColl.seqNumber = kCeSeq;
    d.ceColl.func = "AllGather";
    d.ceColl.count = kCeCount;
    d.ceColl.root = 0;
    d.ceColl.datatype = "ncclBfloat16";
    d.ceColl.syncStrategy = "MC";
    d.ceColl.ceSeqNum = uint32_t(kCeSeq);
    return start(d);
  }
  void ce_sync(void* parent, bool complete) {
    Descr d{};
    d.type = kCeSync;
    d.parentObj = parent;
    d.rank = kRank;
    d.ceCollSync = {complete, kNranks};
    stop(start(d));
  }
  void ce_batch(void* parent) {
    Descr d{};
    d.type = kCeBatch;
    d.parentObj = parent;
    d.rank = kRank;
    d.ceCollBatch = {kNranks - 1, kCeBatchBytes, true};
    stop(start(d));
  }
  void state(void* h, int s, size_t bytes) {
    EventStateArgs a{};
    a.proxyStep.transSize = bytes;
    if (h) p->recordEventState(h, EventState(s), &a);
  }
  void stop(void* h) {
    if (h) p->stopEvent(h);
  }
};

// One proxy op per channel (even channels send, odd receive), kSteps steps
// each walking through the states NCCL reports; steps stop newest first, ops
// in channel order, interleaved with another op's steps.
template <typename N>
void proxy_ops(N& nccl, void* coll, const Coll& c) {
  for (int ch = 0; ch < c.nchannels; ++ch) nccl.kernel_channel(coll, c, ch);
  for (int ch = 0; ch < c.nchannels; ++ch) {
    bool send = ch % 2 == 0;
    void* op = nccl.op(coll, getpid(), ch, send);
    nccl.state(op, kOpInProgress, 0);
    std::vector<void*> steps;
    for (int s = 0; s < kSteps; ++s) {
      void* st = nccl.step(op, s);
      size_t bytes = size_t(1000 * (ch + 1) + s);
      if (send) {
        nccl.state(st, kStepSendGpuWait, bytes);
        nccl.state(st, kStepSendPeerWait, bytes);
        nccl.state(st, kStepSendWait, bytes);
      } else {
        nccl.state(st, kStepRecvWait, bytes);
        nccl.state(st, kStepRecvFlushWait, bytes);
        nccl.state(st, kStepRecvGpuWait, bytes);
      }
      steps.push_back(st);
    }
    for (auto it = steps.rbegin(); it != steps.rend(); ++it) nccl.stop(*it);
    nccl.stop(op);
  }
}

template <typename Profiler, typename Descr, typename Init>
int run(const Profiler* p, Init init) {
  Nccl<Profiler, Descr> nccl{p};
  if (init(nccl) != 0) return 1;
  printf("mask %d\n", nccl.mask);
  void* h[3];
  for (int i = 0; i < 3; ++i) h[i] = nccl.coll(kColls[i]);
  std::thread([&] {  // the proxy thread, while collectives 7 and 8 are open
    proxy_ops(nccl, h[0], kColls[0]);
    proxy_ops(nccl, h[1], kColls[1]);
  })
      .join();
  if constexpr (std::is_same_v<Descr, EventDescrV6>) {
    void* ce = nccl.ce_gather();
    nccl.ce_sync(ce, false);
    nccl.ce_batch(ce);
    nccl.ce_sync(ce, true);
    nccl.ce_sync(reinterpret_cast<void*>(0x5678), true);  // a parent that is not ours
    nccl.stop(ce);
  }
  nccl.stop(h[2]);
  nccl.stop(h[0]);
  nccl.stop(h[1]);
  std::thread([&] {  // collective 9's proxy ops start after its stop
    proxy_ops(nccl, h[2], kColls[2]);
    void* foreign = nccl.op(reinterpret_cast<void*>(0x1234), getpid() + 1, 0, true);
    nccl.stop(foreign);
  })
      .join();
  return p->finalize(nccl.ctx);
}

// A flood: `steps` proxy steps on this thread with no drain between them,
// then the three collectives, which must not be crowded out.
template <typename Profiler, typename Descr, typename Init>
int flood(const Profiler* p, Init init, int steps) {
  Nccl<Profiler, Descr> nccl{p};
  if (init(nccl) != 0) return 1;
  for (int s = 0; s < steps; ++s) nccl.stop(nccl.step(nullptr, s));
  for (const Coll& c : kColls) nccl.stop(nccl.coll(c));
  return p->finalize(nccl.ctx);
}

}  // namespace

// usage: plugin_driver LIB v6|v5|v4 [flood STEPS]
int main(int argc, char** argv) {
  if (argc < 3) return 2;
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);  // as NCCL opens its plugins
  if (!lib) {
    fprintf(stderr, "%s\n", dlerror());
    return 1;
  }
  std::string symbol = std::string("ncclProfiler_") + argv[2];
  void* sym = dlsym(lib, symbol.c_str());
  if (!sym) return 1;
  auto init_v5 = [](auto& n) {
    return n.p->init(&n.ctx, kCommHash, &n.mask, "ddp-pg0", 1, kNranks, kRank, nullptr);
  };
  if (argc == 5 && strcmp(argv[3], "flood") == 0 && strcmp(argv[2], "v5") == 0)
    return flood<ProfilerV5, EventDescrV5>(static_cast<const ProfilerV5*>(sym), init_v5,
                                           atoi(argv[4]));
  if (strcmp(argv[2], "v6") == 0)
    return run<ProfilerV6, EventDescrV6>(static_cast<const ProfilerV6*>(sym), init_v5);
  if (strcmp(argv[2], "v5") == 0)
    return run<ProfilerV5, EventDescrV5>(static_cast<const ProfilerV5*>(sym), init_v5);
  return run<ProfilerV4, EventDescrV4>(static_cast<const ProfilerV4*>(sym), [](auto& n) {
    return n.p->init(&n.ctx, &n.mask, "ddp-pg0", kCommHash, 1, kNranks, kRank, nullptr);
  });
}
