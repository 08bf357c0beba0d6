// Hooks for NCCL's collective and point-to-point calls, and ncclGroupStart/End.
// Each is: enabled check, comm lookup, timestamp (and device timer), the real
// call, timestamp, one POD event. See docs/schema.md for what `bytes` means per op.
#include "injector/nccl/nccl_api.h"
#include "injector/nccl/nccl_comm_info.h"
#include "injector/nccl/nccl_group.h"
#include "injector/nccl/nccl_source.h"
#include "injector/runtime/capture.h"
#include "injector/runtime/collective_timer.h"
#include "injector/runtime/counters.h"
#include "injector/runtime/device_tracer.h"
#include "injector/runtime/log.h"
#include "profiler/core/clock.h"

namespace ddpscope::inject::nccl {
namespace {

struct Call {
  Op op;
  ncclDataType_t dtype;
  int redop;  // ncclRedOp_t, or -1 for ops without a reduction
  size_t count;
  int root, peer;
  ncclComm_t comm;
  cudaStream_t stream;
};

Dtype to_dtype(ncclDataType_t t) {
  static constexpr Dtype map[] = {Dtype::int8,    Dtype::uint8,    Dtype::int32,   Dtype::uint32,
                                  Dtype::int64,   Dtype::uint64,   Dtype::float16, Dtype::float32,
                                  Dtype::float64, Dtype::bfloat16, Dtype::fp8e4m3, Dtype::fp8e5m2};
  return unsigned(t) < std::size(map) ? map[t] : Dtype::unknown;
}

RedOp to_redop(int op) {
  switch (op) {
    case -1:
      return RedOp::none;
    case ncclSum:
      return RedOp::sum;
    case ncclProd:
      return RedOp::prod;
    case ncclMax:
      return RedOp::max;
    case ncclMin:
      return RedOp::min;
    case ncclAvg:
      return RedOp::avg;
    default:
      return RedOp::custom;
  }
}

// A datatype newer than nccl_abi.h (a newer libnccl than we were built for):
// its calls are recorded with dtype 'unknown' and 0 bytes, counted (meta
// count:unknown_dtype_calls), and the user is told once.
[[gnu::cold, gnu::noinline]] void unknown_dtype(int dtype) {
  count(Counter::unknown_dtype_calls);
  notice_once(Notice::unknown_dtype,
              "NCCL datatype %d is newer than this ddpscope knows: its calls are recorded "
              "with dtype 'unknown' and 0 bytes (meta count:unknown_dtype_calls)",
              dtype);
}

// Fills the event in place (in the ring slot itself on the common path).
void describe(CollectiveEvent& e, const Call& c, CommInfo* comm, uint64_t t0, uint64_t t1,
              uint32_t timer, uint32_t correlation, uint64_t group, uint32_t tid) {
  e.t_start = t0;
  e.t_end = t1;
  e.count = c.count;
  e.nranks = comm ? comm->nranks : 0;
  size_t elem = ::ddpscope::nccl::dtype_size(c.dtype);
  if (__builtin_expect(elem == 0, 0)) unknown_dtype(c.dtype);
  e.bytes = message_bytes(c.op, c.count, elem, e.nranks);
  e.comm_id = comm ? comm->comm_id : 0;
  e.comm_rank = comm ? comm->comm_rank : -1;
  e.stream = reinterpret_cast<uint64_t>(c.stream);
  e.seq = 0;  // taken by the caller: at once, or when the group launches
  e.group_id = group;
  e.root = c.root;
  e.peer = c.peer;
  e.tid = tid;
  e.timer = timer;
  e.correlation = correlation;
  e.op = c.op;
  e.dtype = to_dtype(c.dtype);
  e.redop = to_redop(c.redop);
  e.backend = Backend::nccl;
}

// A call on a stream being captured into a CUDA graph enqueues nothing now:
// its work runs at each launch of the graph, which no hook sees. It is not
// recorded (no time of ours would be its), only counted, and said once.
[[gnu::cold, gnu::noinline]] void captured_into_graph() {
  count(Counter::graph_captured_collectives);
  notice_once(Notice::graph_capture,
              "NCCL calls captured into a CUDA graph are not recorded: they run at the "
              "graph's launches, which ddpscope does not see (meta "
              "count:graph_captured_collectives)");
}

// Inlined into each hook: the hook's arguments stay in registers.
template <typename Fn, typename... Args>
[[gnu::always_inline]] inline ncclResult_t intercept(const Call& c, Fn real, Args... args) {
  if (!real) return ncclSystemError;
  ThreadState& self = this_thread();  // the one TLS address this call takes
  if (!capturing(self)) return real(args...);
  ReentrancyGuard guard(self);
  CommInfo* comm = comm_info(c.comm);            // registering a comm starts the device tracer
  CollectiveTimer* device = collective_timer();  // null without the job's CUDA driver
  if (device && __builtin_expect(device->capturing(c.stream), 0)) {
    ncclResult_t rc = real(args...);
    if (rc == ncclSuccess || rc == ncclInProgress) captured_into_graph();
    return rc;
  }
  uint64_t group = current_group();
  bool grouped = group != 0;
  // CUPTI sees the kernels themselves; CUDA events are the fall-back. A
  // grouped call launches at ncclGroupEnd, which brackets the group instead.
  DeviceTracer* tracer = grouped ? nullptr : device_tracer();
  CollectiveTimer* timer = grouped || tracer ? nullptr : device;
  uint32_t slot = timer ? timer->begin(c.stream) : kNoTimer;
  uint32_t correlation = tracer ? next_correlation() : 0;
  if (tracer) tracer->push_correlation(correlation);
  uint64_t t0 = clock::ticks();
  ncclResult_t rc = real(args...);
  uint64_t t1 = clock::ticks();
  if (tracer) tracer->pop_correlation();
  if (slot != kNoTimer) timer->end(slot, c.stream, 1);
  if (rc != ncclSuccess && rc != ncclInProgress) {  // nothing was enqueued
    if (slot != kNoTimer) timer->release(slot);
    return rc;
  }
  if (grouped) {
    CollectiveEvent e;
    describe(e, c, comm, t0, t1, slot, 0, group, thread_id(self));
    if (!hold_in_group(e, comm)) {
      e.seq = comm ? next_seq(*comm) : 0;
      emit(e);
    }
    return rc;
  }
  uint64_t seq = comm ? next_seq(*comm) : 0;  // taken even if the ring is full
  if (auto* ev = reserve_event_body<CollectiveEvent>(
          self, source(), uint8_t(CommEventKind::collective), EventClass::comm)) {
    describe(*ev, c, comm, t0, t1, slot, correlation, 0, self.tid);
    ev->seq = seq;
    publish_event(self);
  } else if (slot != kNoTimer) {
    timer->release(slot);  // no event will ever read it
  }
  return rc;
}

}  // namespace
}  // namespace ddpscope::inject::nccl

using ddpscope::Op;
using ddpscope::inject::nccl::Call;
using ddpscope::inject::nccl::intercept;

extern "C" {

ncclResult_t ncclAllReduce(const void* send, void* recv, size_t count, ncclDataType_t dtype,
                           ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  return intercept(Call{Op::allreduce, dtype, op, count, -1, -1, comm, stream},
                   DDPSCOPE_REAL_NCCL(AllReduce), send, recv, count, dtype, op, comm, stream);
}

ncclResult_t ncclBroadcast(const void* send, void* recv, size_t count, ncclDataType_t dtype,
                           int root, ncclComm_t comm, cudaStream_t stream) {
  return intercept(Call{Op::broadcast, dtype, -1, count, root, -1, comm, stream},
                   DDPSCOPE_REAL_NCCL(Broadcast), send, recv, count, dtype, root, comm, stream);
}

ncclResult_t ncclBcast(void* buff, size_t count, ncclDataType_t dtype, int root, ncclComm_t comm,
                       cudaStream_t stream) {
  return intercept(Call{Op::broadcast, dtype, -1, count, root, -1, comm, stream},
                   DDPSCOPE_REAL_NCCL(Bcast), buff, count, dtype, root, comm, stream);
}

ncclResult_t ncclReduce(const void* send, void* recv, size_t count, ncclDataType_t dtype,
                        ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream) {
  return intercept(Call{Op::reduce, dtype, op, count, root, -1, comm, stream},
                   DDPSCOPE_REAL_NCCL(Reduce), send, recv, count, dtype, op, root, comm, stream);
}

ncclResult_t ncclAllGather(const void* send, void* recv, size_t count, ncclDataType_t dtype,
                           ncclComm_t comm, cudaStream_t stream) {
  return intercept(Call{Op::allgather, dtype, -1, count, -1, -1, comm, stream},
                   DDPSCOPE_REAL_NCCL(AllGather), send, recv, count, dtype, comm, stream);
}

ncclResult_t ncclReduceScatter(const void* send, void* recv, size_t count, ncclDataType_t dtype,
                               ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  return intercept(Call{Op::reduce_scatter, dtype, op, count, -1, -1, comm, stream},
                   DDPSCOPE_REAL_NCCL(ReduceScatter), send, recv, count, dtype, op, comm, stream);
}

ncclResult_t ncclAlltoAll(const void* send, void* recv, size_t count, ncclDataType_t dtype,
                          ncclComm_t comm, cudaStream_t stream) {
  return intercept(Call{Op::alltoall, dtype, -1, count, -1, -1, comm, stream},
                   DDPSCOPE_REAL_NCCL(AlltoAll), send, recv, count, dtype, comm, stream);
}

ncclResult_t ncclGather(const void* send, void* recv, size_t count, ncclDataType_t dtype, int root,
                        ncclComm_t comm, cudaStream_t stream) {
  return intercept(Call{Op::gather, dtype, -1, count, root, -1, comm, stream},
                   DDPSCOPE_REAL_NCCL(Gather), send, recv, count, dtype, root, comm, stream);
}

ncclResult_t ncclScatter(const void* send, void* recv, size_t count, ncclDataType_t dtype, int root,
                         ncclComm_t comm, cudaStream_t stream) {
  return intercept(Call{Op::scatter, dtype, -1, count, root, -1, comm, stream},
                   DDPSCOPE_REAL_NCCL(Scatter), send, recv, count, dtype, root, comm, stream);
}

ncclResult_t ncclSend(const void* send, size_t count, ncclDataType_t dtype, int peer,
                      ncclComm_t comm, cudaStream_t stream) {
  return intercept(Call{Op::send, dtype, -1, count, -1, peer, comm, stream},
                   DDPSCOPE_REAL_NCCL(Send), send, count, dtype, peer, comm, stream);
}

ncclResult_t ncclRecv(void* recv, size_t count, ncclDataType_t dtype, int peer, ncclComm_t comm,
                      cudaStream_t stream) {
  return intercept(Call{Op::recv, dtype, -1, count, -1, peer, comm, stream},
                   DDPSCOPE_REAL_NCCL(Recv), recv, count, dtype, peer, comm, stream);
}

// Groups are tracked whether or not we are recording: a group opened before
// recording started must still close correctly.
ncclResult_t ncclGroupStart() {
  auto real = DDPSCOPE_REAL_NCCL(GroupStart);
  if (!real) return ncclSystemError;
  ncclResult_t rc = real();
  if (rc == ncclSuccess && ddpscope::inject::this_thread().depth == 0)
    ddpscope::inject::nccl::group_started();
  return rc;
}

ncclResult_t ncclGroupEnd() {
  auto real = DDPSCOPE_REAL_NCCL(GroupEnd);
  if (!real) return ncclSystemError;
  if (ddpscope::inject::this_thread().depth != 0) return real();
  ddpscope::inject::ReentrancyGuard guard;
  return ddpscope::inject::nccl::group_ended([&] { return real(); });
}

// Ends the group as ncclGroupEnd does (NCCL >= 2.22), but with a simInfo NCCL
// only estimates the group's calls and launches none of them: they are not
// recorded (nor do they take a seq). Without one it is ncclGroupEnd.
ncclResult_t ncclGroupSimulateEnd(ncclSimInfo_t* sim) {
  auto real = DDPSCOPE_REAL_NCCL(GroupSimulateEnd);
  if (!real) return ncclSystemError;
  if (ddpscope::inject::this_thread().depth != 0) return real(sim);
  ddpscope::inject::ReentrancyGuard guard;
  if (!sim) return ddpscope::inject::nccl::group_ended([&] { return real(sim); });
  return ddpscope::inject::nccl::group_simulated([&] { return real(sim); });
}

}  // extern "C"
