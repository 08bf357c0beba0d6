// Hooks for the gloo:: collective entry points libtorch calls through its PLT
// (`nm -D --undefined-only libtorch_cpu.so | c++filt | grep gloo::`). Gloo runs
// a collective inside the call, on one of ProcessGroupGloo's worker threads, so
// the call's interval is the execution itself (timing='host'). Those workers may
// run collectives in a different order than they were issued: the Gloo tag,
// ProcessGroupGloo's collective counter, is recorded as `seq` to match them.
#include <mutex>
#include <stdexcept>
#include <string>
#include <unordered_map>

#include "injector/gloo/gloo_access.h"
#include "injector/gloo/gloo_layout.h"
#include "injector/runtime/capture.h"
#include "injector/runtime/comm_events.h"
#include "injector/runtime/comm_registry.h"
#include "injector/runtime/source.h"
#include "injector/runtime/symbols.h"
#include "profiler/core/clock.h"

namespace ddpscope::inject::gloo_hooks {
namespace {

using gloo_access::GlooCall;

// Gloo as a capture source (injector/runtime/source.h): the runtime's
// communication events, under this id.
SourceId source() {
  static const SourceId id = register_source({"gloo", convert_comm_event});
  return id;
}

// Contexts get ids from their size and how many contexts of that size this
// process used before: equal on every rank of one process group, since ranks
// create their groups in the same order.
CommInfo* context_info(const gloo::Context* ctx) {
  if (!ctx) return nullptr;
  if (CommInfo* c = comm_registry().find(ctx)) return c;
  static std::mutex mu;
  static std::unordered_map<int, uint64_t> seen_by_size;
  std::lock_guard<std::mutex> lock(mu);
  if (CommInfo* c = comm_registry().find(ctx)) return c;
  auto [rank, size] = gloo_access::ranks_of(ctx);
  uint64_t parts[3] = {0x676c6f6f /* "gloo" */, uint64_t(size), seen_by_size[size]++};
  uint64_t id = fnv1a(parts, sizeof parts) & 0x7fffffffffffffffull;
  CommInfo* c = comm_registry().put(ctx, id, size, rank, -1, Backend::gloo);
  if (!c) return nullptr;
  if (auto* e = reserve_event_body<CommInitEvent>(source(), uint8_t(CommEventKind::comm_init),
                                                  EventClass::comm)) {
    *e = CommInitEvent{clock::ticks(), id, 0, size, rank, -1, Backend::gloo, CommOrigin::first_use};
    publish_event();
  }
  return c;
}

void emit(CommEventKind kind, Op op, const GlooCall& g, uint64_t t0, uint64_t t1) {
  CommInfo* comm = context_info(g.context);
  auto* e = reserve_event_body<CollectiveEvent>(source(), uint8_t(kind), EventClass::comm);
  if (!e) return;
  CollectiveEvent& c = *e;
  c.t_start = t0;
  c.t_end = t1;
  c.count = g.elements;
  c.bytes = g.bytes;
  c.comm_id = comm ? comm->comm_id : 0;
  c.stream = 0;
  c.seq = g.tag;
  c.group_id = 0;
  c.root = g.root;
  c.peer = -1;
  auto [rank, size] = gloo_access::ranks_of(g.context);
  c.comm_rank = rank;
  c.nranks = size;
  c.tid = thread_id();
  c.timer = kNoTimer;
  c.op = op;
  c.dtype = dtype_of_width(unsigned(g.element_size));
  c.redop = op_is(op, kReduces) ? RedOp::custom : RedOp::none;
  c.backend = Backend::gloo;
  publish_event();
}

template <typename Options>
using GlooFn = void (*)(Options&);

// Gloo is libgloo.so.0 under Debian's torch and part of libtorch_cpu.so in
// PyPI's wheels: the search names no library (symbols.h).
template <typename Options>
[[gnu::always_inline]] inline GlooFn<Options> real(std::atomic<void*>& cache, const char* mangled,
                                                   const void* caller) {
  return cached_real<GlooFn<Options>>(cache, [&] {
    return resolve_real(cache, {mangled}, {"libgloo.so.0"}, caller, "an exception");
  });
}

// Every hook: run the real function, and record the interval around it when
// the options can be read (gloo_layout.h). The call itself is never skipped.
// Entering is an event of its own: a rank blocked inside the call (a peer
// that never came) shows it in flight (comm_events.h).
template <typename Access, typename Options>
void intercept(int op_index, Op op, Options& opts, std::atomic<void*>& cache, const char* mangled,
               const void* caller) {
  auto fn = real<Options>(cache, mangled, caller);
  // Gloo reports failure by exception; code linked with Gloo always has a
  // definition, so only a lookup by name can get here (symbols.h).
  if (!fn) throw std::runtime_error(std::string("ddpscope: no loaded object defines ") + mangled);
  if (!capturing() || !gloo_layout::trusted(op_index, opts, reinterpret_cast<const void*>(fn)))
    return fn(opts);
  ReentrancyGuard guard;
  const GlooCall call = Access::read(opts);  // inputs only: the same before and after
  uint64_t t0 = clock::ticks();
  emit(CommEventKind::collective_begin, op, call, t0, t0);
  fn(opts);  // a Gloo exception propagates to the caller unrecorded, as it would without us
  uint64_t t1 = clock::ticks();
  emit(CommEventKind::collective, op, call, t0, t1);
}

}  // namespace
}  // namespace ddpscope::inject::gloo_hooks

#define DDPSCOPE_GLOO_HOOK(index, name, Access, Options, op, mangled)                   \
  void name(Options& opts) {                                                            \
    static std::atomic<void*> cache{nullptr};                                           \
    ::ddpscope::inject::gloo_hooks::intercept<::ddpscope::inject::gloo_access::Access>( \
        index, ::ddpscope::Op::op, opts, cache, mangled, DDPSCOPE_CALLER());            \
  }

namespace gloo {
DDPSCOPE_GLOO_HOOK(0, allreduce, Allreduce, const AllreduceOptions, allreduce,
                   "_ZN4gloo9allreduceERKNS_16AllreduceOptionsE")
DDPSCOPE_GLOO_HOOK(1, broadcast, Broadcast, BroadcastOptions, broadcast,
                   "_ZN4gloo9broadcastERNS_16BroadcastOptionsE")
DDPSCOPE_GLOO_HOOK(2, reduce, Reduce, ReduceOptions, reduce, "_ZN4gloo6reduceERNS_13ReduceOptionsE")
DDPSCOPE_GLOO_HOOK(3, allgather, Allgather, AllgatherOptions, allgather,
                   "_ZN4gloo9allgatherERNS_16AllgatherOptionsE")
DDPSCOPE_GLOO_HOOK(4, allgatherv, Allgatherv, AllgathervOptions, allgather,
                   "_ZN4gloo10allgathervERNS_17AllgathervOptionsE")
DDPSCOPE_GLOO_HOOK(5, alltoall, Alltoall, AlltoallOptions, alltoall,
                   "_ZN4gloo8alltoallERNS_15AlltoallOptionsE")
DDPSCOPE_GLOO_HOOK(6, alltoallv, Alltoallv, AlltoallvOptions, alltoall,
                   "_ZN4gloo9alltoallvERNS_16AlltoallvOptionsE")
DDPSCOPE_GLOO_HOOK(7, gather, Gather, GatherOptions, gather, "_ZN4gloo6gatherERNS_13GatherOptionsE")
DDPSCOPE_GLOO_HOOK(8, scatter, Scatter, ScatterOptions, scatter,
                   "_ZN4gloo7scatterERNS_14ScatterOptionsE")
DDPSCOPE_GLOO_HOOK(9, barrier, Barrier, BarrierOptions, barrier,
                   "_ZN4gloo7barrierERNS_14BarrierOptionsE")
}  // namespace gloo
