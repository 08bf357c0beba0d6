// What the store holds, one struct per table row, times in nanoseconds. The
// injector converts its hot-path events into these off the hot path; readers
// hand the same structs back, so writer and reader cannot drift apart.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "profiler/core/vocab.h"

namespace ddpscope {

constexpr int64_t kNoTime = INT64_MIN;  // stored as NULL
// Every stored time is below 2^62 ns (146 years) in magnitude, so that the
// difference of two never overflows; the reader refuses anything else as damage.
constexpr int64_t kTimeLimit = int64_t(1) << 62;

struct CollectiveRecord {
  int64_t id = 0;  // row id; assigned by the store
  int32_t rank = 0;
  uint64_t comm_id = 0;
  int32_t comm_rank = -1;
  int32_t nranks = 0;
  uint64_t seq = 0;  // per-communicator call order (NCCL) or the Gloo tag
  Op op = Op::allreduce;
  Dtype dtype = Dtype::unknown;
  RedOp redop = RedOp::none;
  uint64_t count = 0;  // elements as the API counts them
  uint64_t bytes = 0;  // nccl-tests' message size S (docs/schema.md)
  int32_t root = -1;
  int32_t peer = -1;
  uint64_t stream = 0;
  uint32_t tid = 0;
  uint64_t group_id = 0;  // 0: not inside ncclGroupStart/End
  int64_t host_start_ns = kNoTime;
  int64_t host_end_ns = kNoTime;
  int64_t start_ns = kNoTime;
  int64_t end_ns = kNoTime;
  Timing timing = Timing::none;
};

// A run's collectives as read: in id order taken one vector after another.
// Each reading thread keeps its own vector, since joining them would copy
// every record (0.7 GB at 1,024 ranks x 500 iterations).
using CollectiveRuns = std::vector<std::vector<CollectiveRecord>>;

// A collective a rank entered that had not completed when its file was last
// written: Gloo's call still running on its thread, or NCCL's call returned
// with its kernel not yet done. Rewritten at every flush (schema v5), so a job
// stopped inside a collective keeps which one (docs/hangs.md).
enum class InflightState : uint8_t { running, enqueued };

struct InflightRecord {
  int32_t rank = 0;
  uint64_t comm_id = 0;
  int32_t comm_rank = -1;
  int32_t nranks = 0;
  uint64_t seq = 0;
  Op op = Op::allreduce;
  Dtype dtype = Dtype::unknown;
  uint64_t count = 0;
  uint64_t bytes = 0;
  uint32_t tid = 0;
  int64_t host_start_ns = kNoTime;  // the call began
  int64_t seen_ns = kNoTime;        // the flush that last found it not completed
  InflightState state = InflightState::running;
};

// How a communicator came to be known.
// nccl_plugin: known only from NCCL's profiler plugin (no hook saw it: a
// statically linked NCCL); the merge adds it.
enum class CommOrigin : uint8_t {
  init_rank,
  init_rank_config,
  init_all,
  split,
  first_use,
  nccl_plugin
};
// How its life ended (none: still alive when the process ended).
enum class CommEnd : uint8_t { none, destroy, abort, finalize };

struct CommRecord {
  int32_t rank = 0;
  uint64_t comm_id = 0;
  int32_t nranks = 0;
  int32_t comm_rank = -1;
  int32_t device = -1;
  Backend backend = Backend::unknown;
  uint64_t parent_comm_id = 0;
  CommOrigin origin = CommOrigin::first_use;
  int64_t created_ns = kNoTime;
  int64_t ended_ns = kNoTime;
  CommEnd end = CommEnd::none;
};

struct ProcessRecord {
  int32_t rank = 0;
  int32_t world_size = 0;
  int32_t local_rank = -1;
  std::string host;
  int64_t pid = 0;
  int32_t device = -1;
  Backend backend = Backend::unknown;
  int64_t clock_offset_ns = 0;  // wall-clock ns minus this file's monotonic ns
  uint64_t dropped_events = 0;
  std::string rank_source;  // which variable (or fallback) gave the rank
  int64_t start_ns = kNoTime;
  int64_t end_ns = kNoTime;
  // 1: the rank's writer made its final flush (the process exited through
  // exit(), or finalized otherwise); 0: its file ends at an earlier flush (it
  // was killed, aborted, or is still running). Schema v5.
  int32_t finalized = 0;
};

// How a rank that `record --nproc` started ended (schema v5, run databases
// only): its exit status, or the signal that killed it; -1 / 0 where unknown.
struct RankExitRecord {
  int32_t rank = 0;
  int32_t exit_code = -1;
  int32_t signal = 0;
};

// A rank's Python stacks, all threads, as faulthandler wrote them when
// `record` asked (a hang, an interrupt). Schema v5, run databases only.
struct StackRecord {
  int32_t rank = 0;
  int64_t pid = 0;
  std::string text;
};

// What a GPU activity was, as the kernels table names it (docs/schema.md).
enum class KernelKind : uint8_t { comm, compute, memcpy, memset };

// One GPU activity from CUPTI: a kernel, or a copy-engine memcpy/memset.
struct KernelRecord {
  int32_t rank = 0;
  int32_t device = -1;
  uint64_t stream = 0;  // CUPTI's stream id
  std::string name;     // demangled kernel name; "memcpy HtoD" etc. for copies
  int64_t start_ns = kNoTime;
  int64_t end_ns = kNoTime;
  uint64_t correlation = 0;   // CUPTI correlation id of the launching API call
  int64_t collective_id = 0;  // collectives.id it ran for; 0 (NULL) for none
  KernelKind kind = KernelKind::compute;
};

// One NVTX range on one thread (push/pop or start/end).
struct RangeRecord {
  int32_t rank = 0;
  uint32_t tid = 0;
  std::string domain;  // "" for NVTX's default domain
  std::string name;
  int64_t start_ns = kNoTime;
  int64_t end_ns = kNoTime;
};

// A blocking CUDA wait (or, for cudaStreamWaitEvent, a dependency edge: the
// host call itself, which does not block).
enum class SyncCall : uint8_t {
  stream_synchronize,
  device_synchronize,
  event_synchronize,
  stream_wait_event
};

struct SyncRecord {
  int32_t rank = 0;
  uint32_t tid = 0;
  SyncCall call = SyncCall::device_synchronize;
  uint64_t stream = 0;
  int64_t start_ns = kNoTime;
  int64_t end_ns = kNoTime;
};

// DDP's own account of itself, from the Python start-up hook (injector/ddp/):
// one fact about one DDP instance of this process (instance: creation order,
// from 0). Keys and values are documented in docs/schema.md; a later row for
// the same key supersedes an earlier one (bucket layouts change on rebuild).
struct DdpInfoRecord {
  int32_t rank = 0;
  int32_t instance = 0;
  std::string key;
  std::string value;
  int64_t recorded_ns = kNoTime;
};

// What a stretch of Python was doing while it issued collectives: DDP's
// constructor, a DDP forward, a comm hook on one bucket, a join shadow step,
// a user's torch.distributed call. The collectives it issued are those its
// process group numbered seq_begin..seq_end-1 (ProcessGroup's sequence
// number, read before and after on the issuing thread), whichever thread ran
// them.
enum class DdpRegionKind : uint8_t {
  init,          // DistributedDataParallel.__init__: parameter checks, state broadcast
  forward,       // DistributedDataParallel.forward: join notices, rebuild sync, buffers
  comm_hook,     // a Python comm hook on one bucket (bucket set)
  join_shadow,   // a joined rank shadowing one iteration of the others
  join_final,    // DDP's join post-hook: the final model broadcast
  join_control,  // torch's Join context: counting the ranks not yet joined
  user,          // a torch.distributed call made outside all of the above
};

// Region flags.
enum DdpRegionFlag : uint32_t {
  kRegionSync = 1,         // forward: require_backward_grad_sync (not in no_sync())
  kRegionGradEnabled = 2,  // forward: autograd on (a training forward)
  kRegionRebuilt = 4,      // forward: DDP rebuilt its buckets during it
  kRegionShadow = 8,       // inside a join shadow step
};

struct DdpRegionRecord {
  int32_t rank = 0;
  int32_t instance = -1;  // -1: no DDP instance (user, join_control)
  DdpRegionKind kind = DdpRegionKind::user;
  int32_t bucket = -1;     // comm_hook: the bucket's index
  int64_t pg_key = 0;      // the process group (its Python id)
  int64_t seq_begin = -1;  // -1: unknown
  int64_t seq_end = -1;
  uint32_t flags = 0;
  uint32_t tid = 0;
  int64_t start_ns = kNoTime;
  int64_t end_ns = kNoTime;
};

// FSDP2's own account of itself, from the same start-up hook: one fact about
// one unit (an FSDPParamGroup: the parameters one fully_shard call manages;
// unit: numbered per process in the order their roots first ran). Keys are
// documented in docs/schema.md.
struct FsdpInfoRecord {
  int32_t rank = 0;
  int32_t unit = 0;
  std::string key;
  std::string value;
  int64_t recorded_ns = kNoTime;
};

// What FSDP was doing for a unit: one collective it issued (its process
// group numbered it seq_begin; seq_end = seq_begin + 1), or a moment without
// one (a wait, a step's start, backward's end: seq -1).
enum class FsdpRegionKind : uint8_t {
  forward_all_gather,   // unshard in forward (or a forward prefetch)
  backward_all_gather,  // unshard in backward (or a backward prefetch)
  reduce_scatter,       // post-backward: the gradients' reduce-scatter
  all_reduce,           // post-backward: HSDP's all-reduce over the replicate group
  wait,                 // wait_for_unshard: the unit needs its parameters now
  step,                 // the root's pre-forward: a training step begins (unit: the root's)
  backward_end,         // the root's post-backward callback: autograd is done
};

enum FsdpRegionFlag : uint32_t {
  kFsdpPrefetch = 1,  // issued ahead of need, by another unit (_prefetch_unshard)
  kFsdpAsync = 2,     // issued with async_op: the call returned before completion
};

struct FsdpRegionRecord {
  int32_t rank = 0;
  int32_t unit = 0;
  FsdpRegionKind kind = FsdpRegionKind::wait;
  int64_t pg_key = 0;  // the process group (its Python id); 0: none
  int64_t seq_begin = -1;
  int64_t seq_end = -1;
  uint32_t flags = 0;
  uint32_t tid = 0;
  int64_t start_ns = kNoTime;
  int64_t end_ns = kNoTime;
};

// NCCL's own account of its work, from its profiler plugin
// (injector/nccl_profiler/). comm_hash is the 64-bit hash NCCL hands the
// plugin at init (its commHash), stored as its two's-complement int64; seq is
// NCCL's per-communicator collective sequence number (-1: unknown).
struct NcclPluginCommRecord {
  int32_t rank = 0;
  int64_t comm_hash = 0;
  std::string name;  // the communicator's name, if the job gave one
  int32_t nnodes = 0, nranks = 0, comm_rank = -1;
  int64_t recorded_ns = kNoTime;
  uint64_t comm_id = 0;  // run.db: the communicator's id in `comms` (set by the merge)
};

// The `algo` of a collective NCCL ran on copy engines (profiler v6's ceColl):
// no NCCL algorithm has this name. Its `proto` is NCCL's synchronisation
// strategy ("MC" multicast, "UC" unicast) and its `seq` NCCL's copy-engine
// sequence number, not the per-function count of a kernel collective.
inline constexpr const char* kNcclCopyEngineAlgo = "CE";

struct NcclPluginCollectiveRecord {
  int32_t rank = 0;
  int64_t comm_hash = 0;
  int64_t seq = -1;
  std::string func, algo, proto, dtype;  // NCCL's own names: "AllReduce", "RING", "LL128"
  int32_t nchannels = 0, nwarps = 0;
  int64_t count = 0;
  int32_t root = -1;
  uint32_t tid = 0;
  int64_t start_ns = kNoTime;  // NCCL's task start and stop (host side)
  int64_t end_ns = kNoTime;
  int32_t comm_rank = -1;     // this rank's place in the communicator
  int64_t coll_key = 0;       // per process, unique: ties proxy ops and kernel channels to it
  int64_t collective_id = 0;  // run.db: the `collectives` row it is (set by the merge)
};

// One proxy operation: one channel's network send or receive for a collective.
struct NcclProxyOpRecord {
  int32_t rank = 0;
  int64_t comm_hash = 0;
  int64_t seq = -1;
  int32_t channel = 0, peer = -1;
  bool is_send = false;
  int32_t nsteps = 0, chunk_bytes = 0;
  int64_t start_ns = kNoTime;
  int64_t progress_ns = kNoTime;  // when the proxy began progressing it
  int64_t end_ns = kNoTime;
  int64_t coll_key = 0;  // its collective's coll_key; 0: a p2p, or not known
};

// One proxy step: one network transfer of a proxy operation. The *_wait_ns
// columns are when the step entered that state (kNoTime: never did).
struct NcclProxyStepRecord {
  int32_t rank = 0;
  int64_t comm_hash = 0;
  int64_t seq = -1;
  int32_t channel = 0, peer = -1;
  bool is_send = false;
  int32_t step = 0;
  int64_t bytes = 0;
  int64_t start_ns = kNoTime;
  int64_t gpu_wait_ns = kNoTime;    // send: waiting for the GPU's data; recv: for the GPU to drain
  int64_t peer_wait_ns = kNoTime;   // send: waiting for the peer's clear-to-send
  int64_t net_wait_ns = kNoTime;    // posted to the network, waiting for it to complete
  int64_t flush_wait_ns = kNoTime;  // recv: waiting for the GPUDirect flush
  int64_t end_ns = kNoTime;
  int64_t coll_key = 0;
};

// One channel of a collective's kernel, as NCCL's proxy saw it finish: GPU
// start and stop from the GPU's global timer (ns on the GPU's clock, not the
// host's: their difference is what counts), and the host times the proxy
// reported them at.
struct NcclKernelChannelRecord {
  int32_t rank = 0;
  int64_t comm_hash = 0;
  int64_t coll_key = 0;
  int32_t channel = 0;
  int64_t gpu_start = 0, gpu_stop = 0;  // GPU global timer, ns; 0: not reported
  int64_t start_ns = kNoTime;
  int64_t end_ns = kNoTime;
};

// A step of a copy-engine collective (NCCL >= 2.29, profiler v6): one of its
// synchronisations between the ranks or one batch of its copies. Host times:
// NCCL starts and stops these events around the work it enqueues.
struct NcclCeOpRecord {
  int32_t rank = 0;
  int64_t comm_hash = 0;
  int64_t coll_key = 0;      // its collective's (nccl_plugin_collectives.coll_key); 0: none of ours
  std::string kind;          // "sync" or "batch"
  int32_t nranks = 0;        // sync: ranks synchronised
  bool is_complete = false;  // sync: the completion barrier (else the ready barrier)
  int32_t num_ops = 0;       // batch: copies in it
  int64_t bytes = 0;         // batch: bytes they move
  bool intra_sync = false;   // batch: synchronised within the batch
  int64_t start_ns = kNoTime;
  int64_t end_ns = kNoTime;
};

const char* name_of(DdpRegionKind kind);
std::optional<DdpRegionKind> parse_ddp_region_kind(std::string_view name);
const char* name_of(FsdpRegionKind kind);
std::optional<FsdpRegionKind> parse_fsdp_region_kind(std::string_view name);

const char* name_of(KernelKind kind);
const char* name_of(SyncCall call);
std::optional<KernelKind> parse_kernel_kind(std::string_view name);
std::optional<SyncCall> parse_sync_call(std::string_view name);

const char* name_of(CommOrigin origin);
const char* name_of(CommEnd end);
CommOrigin parse_comm_origin(std::string_view name);
CommEnd parse_comm_end(std::string_view name);

}  // namespace ddpscope
