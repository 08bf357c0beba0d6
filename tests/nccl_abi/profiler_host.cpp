#include "profiler_host.h"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <mutex>
#include <string>
#include <type_traits>

#include "injector/nccl/nccl_abi.h"
#include "injector/nccl_profiler/profiler_abi.h"

namespace ddpscope::testnccl {
namespace {

namespace np = inject::nccl_profiler;

// The GPU's global timer stands in as CLOCK_REALTIME: another clock than the
// host's monotonic one, as a GPU's is.
unsigned long long gpu_timer() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

struct Choice {
  const char *algo, *proto;
  int nchannels, nwarps;
};

// NCCL's tuner in miniature: latency-bound sizes on a tree with LL, bulk on a
// ring with SIMPLE.
Choice choose(size_t bytes) {
  if (bytes <= (64u << 10)) return {"TREE", "LL", 2, 8};
  if (bytes <= (4u << 20)) return {"RING", "LL128", 4, 16};
  return {"RING", "SIMPLE", 8, 32};
}

const char* func_of(Kind k) {
  switch (k) {
    case Kind::kAllReduce:
      return "AllReduce";
    case Kind::kBroadcast:
      return "Broadcast";
    case Kind::kReduce:
      return "Reduce";
    case Kind::kAllGather:
      return "AllGather";
    case Kind::kReduceScatter:
      return "ReduceScatter";
    default:
      return nullptr;  // p2p in NCCL's sense, or no operation
  }
}

int func_index(Kind k) { return int(k); }

const char* dtype_name(int dtype) {
  static const char* const kNames[] = {"ncclInt8",     "ncclUint8",      "ncclInt32",
                                       "ncclUint32",   "ncclInt64",      "ncclUint64",
                                       "ncclFloat16",  "ncclFloat32",    "ncclFloat64",
                                       "ncclBfloat16", "ncclFloat8e4m3", "ncclFloat8e5m2"};
  return dtype >= 0 && dtype < int(std::size(kNames)) ? kNames[dtype] : "Unknown";
}

uint64_t mix(uint64_t x) {  // splitmix64's finaliser: NCCL's commHash is no hash of ours
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// The loaded plugin: v6, v5 or v4, the first NCCL's lookup finds. The three
// tables share every function but startEvent's descriptor and v4's init.
struct Plugin {
  const np::ProfilerV6* v6 = nullptr;
  const np::ProfilerV5* v5 = nullptr;
  const np::ProfilerV4* v4 = nullptr;
  bool loaded() const { return v6 || v5 || v4; }
  template <typename Fn>
  auto common(Fn fn) const {  // stopEvent, recordEventState, finalize
    return v6 ? fn(*v6) : v5 ? fn(*v5) : fn(*v4);
  }
};

Plugin load() {
  Plugin p;
  const char* name = getenv("NCCL_PROFILER_PLUGIN");
  if (!name || !*name || strcasecmp(name, "none") == 0) return p;
  void* lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (!lib && !strchr(name, '/'))
    lib = dlopen(("libnccl-profiler-" + std::string(name) + ".so").c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) return p;
  p.v6 = static_cast<const np::ProfilerV6*>(dlsym(lib, "ncclProfiler_v6"));
  if (!p.v6) p.v5 = static_cast<const np::ProfilerV5*>(dlsym(lib, "ncclProfiler_v5"));
  if (!p.v6 && !p.v5) p.v4 = static_cast<const np::ProfilerV4*>(dlsym(lib, "ncclProfiler_v4"));
  return p;
}

const Plugin& plugin() {
  static const Plugin p = load();
  return p;
}

template <typename Descr>
void* start(ncclComm* c, Descr& d) {
  const Plugin& p = plugin();
  void* h = nullptr;
  if (!(c->profiler_mask & int(d.type))) return nullptr;  // NCCL skips what was not asked for
  if constexpr (std::is_same_v<Descr, np::EventDescrV6>)
    p.v6->startEvent(c->profiler_ctx, &h, &d);
  else if constexpr (std::is_same_v<Descr, np::EventDescrV5>)
    p.v5->startEvent(c->profiler_ctx, &h, &d);
  else
    p.v4->startEvent(c->profiler_ctx, &h, &d);
  return h;
}

// Calls fn with a default-constructed descriptor of the loaded version.
template <typename Fn>
auto with_descr(Fn fn) {
  const Plugin& p = plugin();
  return p.v6 ? fn(np::EventDescrV6{}) : p.v5 ? fn(np::EventDescrV5{}) : fn(np::EventDescrV4{});
}

void stop(void* h) {
  if (h) plugin().common([h](const auto& t) { return t.stopEvent(h); });
}

void state(void* h, np::EventState s, np::EventStateArgs* a) {
  if (h) plugin().common([&](const auto& t) { return t.recordEventState(h, s, a); });
}

template <typename Descr>
Descr descr(uint64_t type, void* parent, int rank) {
  Descr d{};
  d.type = decltype(d.type)(type);
  d.parentObj = parent;
  d.rank = rank;
  return d;
}

template <typename Descr>
void* start_coll(const Request& r, const Choice& ch) {
  ncclComm* c = r.comm;
  auto d = descr<Descr>(np::kColl, nullptr, c->rank);
  d.coll.seqNumber = c->profiler_seq[func_index(r.kind)]++;
  d.coll.func = func_of(r.kind);
  d.coll.sendBuff = r.send;
  d.coll.recvBuff = r.recv;
  d.coll.count = r.count;
  d.coll.root = r.root;
  d.coll.datatype = dtype_name(r.dtype);
  d.coll.nChannels = uint8_t(ch.nchannels);
  d.coll.nWarps = uint8_t(ch.nwarps);
  d.coll.algo = ch.algo;
  d.coll.proto = ch.proto;
  return start(c, d);
}

// One channel's proxy send to the next rank and receive from the previous,
// two network steps each.
template <typename Descr>
void proxy_ops(const ProfiledLaunch& l, int channel) {
  ncclComm* c = l.comm;
  const int n = c->nranks;
  const size_t chunk = l.bytes / size_t(l.nchannels * 2) + 1;
  for (int is_send = 1; is_send >= 0; --is_send) {
    auto d = descr<Descr>(np::kProxyOp, l.coll, c->rank);
    d.proxyOp = {getpid(), uint8_t(channel), (c->rank + (is_send ? 1 : n - 1)) % n,
                 2,        int(chunk),       is_send};
    void* op = start(c, d);
    state(op, np::kOpInProgress, nullptr);
    for (int step = 0; step < 2; ++step) {
      auto sd = descr<Descr>(np::kProxyStep, op, c->rank);
      sd.proxyStep.step = step;
      void* h = start(c, sd);
      np::EventStateArgs a{};
      a.proxyStep.transSize = chunk;
      state(h, is_send ? np::kStepSendGpuWait : np::kStepRecvWait, &a);
      state(h, is_send ? np::kStepSendWait : np::kStepRecvGpuWait, &a);
      stop(h);
    }
    stop(op);
  }
}

// NCCL >= 2.29 runs an all-gather over symmetric memory on the copy engines
// when it can: no kernel, no proxy; v6 reports a ceColl with a ready sync,
// one batch of copies (one per peer) and a completion sync as children, all
// within the launch. The double stands in for that choice with
// DDPSCOPE_TESTNCCL_CE_ALLGATHER=1, as long as the plugin asked for ceColl.
bool on_copy_engine(const Request& r) {
  static const bool chosen = [] {
    const char* v = getenv("DDPSCOPE_TESTNCCL_CE_ALLGATHER");
    return v && strcmp(v, "1") == 0;
  }();
  return chosen && plugin().v6 && r.kind == Kind::kAllGather &&
         (r.comm->profiler_mask & np::kCeColl);
}

void ce_sync(ncclComm* c, void* coll, bool complete) {
  auto d = descr<np::EventDescrV6>(np::kCeSync, coll, c->rank);
  d.ceCollSync = {complete, c->nranks};
  ++c->profiler_ce_seq;
  stop(start(c, d));
}

void launch_on_copy_engine(const Request& r) {
  ncclComm* c = r.comm;
  auto d = descr<np::EventDescrV6>(np::kCeColl, nullptr, c->rank);
  d.ceColl.seqNumber = c->profiler_ce_seq;
  d.ceColl.func = func_of(r.kind);
  d.ceColl.sendBuff = r.send;
  d.ceColl.recvBuff = r.recv;
  d.ceColl.count = r.count;
  d.ceColl.root = r.root;
  d.ceColl.datatype = dtype_name(r.dtype);
  d.ceColl.syncStrategy = "UC";
  d.ceColl.ceSeqNum = c->profiler_ce_seq;
  d.ceColl.stream = nullptr;  // the double keeps no stream in a request
  void* coll = start(c, d);
  ce_sync(c, coll, false);
  auto b = descr<np::EventDescrV6>(np::kCeBatch, coll, c->rank);
  b.ceCollBatch = {c->nranks - 1, r.count * nccl::dtype_size(r.dtype) * size_t(c->nranks - 1),
                   false};
  stop(start(c, b));
  ce_sync(c, coll, true);
  stop(coll);
}

template <typename Descr>
void complete(const ProfiledLaunch& l) {
  const unsigned long long gpu_stop = gpu_timer();
  for (int ch = 0; ch < l.nchannels; ++ch) {
    auto d = descr<Descr>(np::kKernelCh, l.coll, l.comm->rank);
    d.kernelCh.channelId = uint8_t(ch);
    d.kernelCh.pTimer = l.gpu_start + uint64_t(ch) * 100;  // channels start a little apart
    void* h = start(l.comm, d);
    np::EventStateArgs a{};
    a.kernelCh.pTimer = gpu_stop;
    state(h, np::kKernelChStop, &a);
    stop(h);
  }
  for (int ch = 0; ch < l.nchannels; ++ch) proxy_ops<Descr>(l, ch);
}

}  // namespace

void profiler_comm_init(ncclComm* c) {
  const Plugin& p = plugin();
  if (!p.loaded() || c->profiler_ctx || !c->shared) return;
  // One per communicator, as NCCL's (a hash of its unique id) is: the shared
  // state's address would come back for a later communicator once this one is
  // gone, and merge would take their plugin rows for one communicator's.
  uint64_t hash = mix(c->shared->serial ^ (uint64_t(getpid()) << 32));
  int mask = 0;
  np::Result rc =
      p.v6   ? p.v6->init(&c->profiler_ctx, hash, &mask, "", 1, c->nranks, c->rank, nullptr)
      : p.v5 ? p.v5->init(&c->profiler_ctx, hash, &mask, "", 1, c->nranks, c->rank, nullptr)
             : p.v4->init(&c->profiler_ctx, &mask, "", hash, 1, c->nranks, c->rank, nullptr);
  if (rc != np::kSuccess) c->profiler_ctx = nullptr;
  c->profiler_mask = mask;
}

void profiler_comm_end(ncclComm* c) {
  const Plugin& p = plugin();
  if (!p.loaded() || !c->profiler_ctx) return;
  p.common([c](const auto& t) { return t.finalize(c->profiler_ctx); });
  c->profiler_ctx = nullptr;
}

std::vector<ProfiledLaunch> profiler_launch(const std::vector<Request>& reqs) {
  std::vector<ProfiledLaunch> out;
  if (!plugin().loaded()) return out;
  // NCCL sorts a group's tasks before it launches them: here, last call first.
  for (auto it = reqs.rbegin(); it != reqs.rend(); ++it) {
    const Request& r = *it;
    if (!func_of(r.kind) || r.comm->nranks < 2) continue;
    profiler_comm_init(r.comm);
    if (!r.comm->profiler_ctx) continue;
    if (on_copy_engine(r)) {
      launch_on_copy_engine(r);
      continue;
    }
    size_t bytes = r.count * nccl::dtype_size(r.dtype);
    Choice ch = choose(bytes);
    void* coll = with_descr([&](auto d) { return start_coll<decltype(d)>(r, ch); });
    stop(coll);  // NCCL stops a collective once it is launched
    out.push_back({r.comm, coll, ch.nchannels, bytes, gpu_timer()});
  }
  return out;
}

void profiler_complete(const std::vector<ProfiledLaunch>& launches) {
  for (const auto& l : launches) with_descr([&](auto d) { complete<decltype(d)>(l); });
}

}  // namespace ddpscope::testnccl
