// What `ddpscope report` knows about a run, computed once by analyze_run() and
// rendered by every format in reports/ (terminal, CSV, JSON, HTML) and used by
// the regression check. Times are milliseconds or microseconds as the field
// name says; bandwidths are GB/s (1e9 bytes/s) with nccl-tests' definitions.
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "profiler/analysis/fsdp_stats.h"
#include "profiler/analysis/op_summary.h"
#include "profiler/core/vocab.h"

namespace ddpscope::analysis {

// One training iteration of one rank, bounded by the launch of its first DDP
// bucket and the launch of the next iteration's first bucket.
struct IterationStats {
  int rank = 0;
  int index = 0;            // 0-based among detected iterations (warm-up included)
  bool warmup = false;      // before DDP rebuilt its buckets (bucket pattern differs)
  int64_t start_ns = 0;     // first bucket launch (wall clock in a merged run)
  int64_t end_ns = 0;       // next iteration's first bucket launch, or last bucket end
  double iter_ms = 0;       // end - start (0 for the last iteration: no successor)
  double comm_ms = 0;       // first bucket start to last bucket end (DDP's own definition)
  double comm_busy_ms = 0;  // union of bucket intervals
  double exposed_ms = 0;    // comm not hidden behind compute (see docs/figures.md)
  int buckets = 0;
  bool shadow = false;      // a joined rank shadowing the others (join()): not its own step
  int64_t comm_end_ns = 0;  // its last bucket's end: every rank launched its buckets by then
  // The host call of its first bucket (on a GPU, the launch; start_ns is when
  // the bucket ran): where a host-side step marker (Kineto's ProfilerStep) starts.
  int64_t launch_ns = 0;
  // FSDP's communication in it (busy time) and the part compute waited for.
  double fsdp_comm_ms = 0, fsdp_exposed_ms = 0;
};

// One DDP bucket position (index in DDP's reduction order), over the steady
// iterations of every rank.
struct BucketStats {
  int index = 0;
  uint64_t bytes = 0;
  uint64_t calls = 0;
  double median_us = 0, p95_us = 0;
  double algbw_gbps = 0, busbw_gbps = 0;  // from the median duration
  double overlap_pct = 0;                 // share of its interval hidden behind compute
  double exposed_us = 0;                  // median of the part not hidden
  double launch_gap_us = 0;               // median gap from the previous bucket's launch
  int instance = 0;                       // the DDP instance (creation order in the process)
  // What NCCL chose for it most often (its profiler plugin; "" without one):
  // "RING/SIMPLE x8" = algorithm, protocol, channels.
  std::string nccl_choice;
};

// What NCCL chose for collectives of one op and size (its profiler plugin),
// and how long the parts took: one row per choice seen at that size.
struct NcclChoiceStats {
  Op op = Op::allreduce;
  uint64_t bytes = 0;
  int nranks = 0;
  std::string algo, proto;  // NCCL's names
  int nchannels = 0;
  uint64_t calls = 0;
  double median_us = 0, busbw_gbps = 0;  // the collectives' execution (their timing source)
  double kernel_us = -1;   // median kernel span (GPU timer, first channel to last); -1: none
  double network_us = -1;  // median network time (proxy steps); -1: no network part
};

// Collectives grouped by op and message size.
struct SizeClassStats {
  Op op = Op::allreduce;
  uint64_t bytes = 0;
  int nranks = 0;
  uint64_t calls = 0;
  double median_us = 0, p95_us = 0;
  double algbw_gbps = 0, busbw_gbps = 0;  // from the median duration
};

struct RankStats {
  int rank = 0;
  std::string host;
  double late_ms_median = 0;  // how late it enters collectives after the first rank
  double late_ms_p95 = 0;
  double late_ms_max = 0;
  // Lateness entering each iteration (its first bucket). Gloo runs a rank's
  // collectives one after another, so a late rank delays everybody's later
  // buckets alike: only the first bucket of an iteration shows who was late.
  double iteration_late_ms_median = 0;
  double last_share_pct = 0;       // share of collectives it was the last to enter
  double clock_correction_us = 0;  // applied from collective completions, at mid-run
  double iter_ms_median = 0;
  double comm_ms_median = 0;
  uint64_t collectives = 0;
  uint64_t dropped_events = 0;
  int iterations = 0;            // its own synchronising steps (warm-up included)
  int shadow_iterations = 0;     // join(): steps it shadowed after running out of data
  double clock_drift_ppm = 0;    // its host's clock against rank 0's (µs per s)
  double clock_residual_us = 0;  // what the offset + drift line leaves unexplained
  // Share of its communication on the GPU that compute kernels ran through
  // (HTA's comm/comp overlap, kernel_overlap.h); NaN without device-timed
  // communication.
  double kernel_overlap_pct = NAN;
  // How the rank ended: the launcher's account (`record --nproc`), -1 / 0
  // where unknown; and whether its writer made its final flush (the process
  // exited normally) — what a rank file alone can tell under any launcher.
  int exit_code = -1;
  int signal = 0;
  bool finalized = false;
  // FSDP's communication per step (busy time) and its exposed part; 0 without FSDP.
  double fsdp_comm_ms_median = 0, fsdp_exposed_ms_median = 0;
};

// A rank that never entered a collective the others are waiting in: the last
// collective it completed on that communicator, and how it ended.
// An FSDP collective in a hang: its unit and phase (fsdp_hang.h).
struct FsdpCallLabel {
  std::string fqn;  // the unit's module in its root ("" for the root itself)
  FsdpRegionKind phase = FsdpRegionKind::forward_all_gather;
  int iteration = -1;  // the step it belongs to (0: the first)
};

struct MissingRank {
  int rank = 0;
  std::optional<uint64_t> last_seq;  // none: it completed none there
  Op last_op = Op::allreduce;
  uint64_t last_bytes = 0;
  int last_bucket = -1;                    // DDP's bucket index, -1: not a bucket
  std::optional<FsdpCallLabel> last_fsdp;  // FSDP's unit and phase, if FSDP's
  int exit_code = -1;                      // -1 / 0: unknown (see RankStats)
  int signal = 0;
  // "exited with status 1", "killed by signal 9 (SIGKILL)", "still running",
  // "left no rank file", "its file ends before it finished"
  std::string ended;
};

// Where a job stopped, per communicator: the first collective (lowest
// sequence number) that not every member completed (docs/hangs.md).
struct Hang {
  uint64_t comm_id = 0;
  int nranks = 0;
  uint64_t seq = 0;
  Op op = Op::allreduce;
  Dtype dtype = Dtype::unknown;
  uint64_t count = 0, bytes = 0;
  int bucket = -1;                    // DDP's bucket index from DDP's own account; -1: not a bucket
  std::optional<FsdpCallLabel> fsdp;  // or FSDP's unit and phase
  int iteration = -1;  // the waiting ranks' iteration (backward pass, FSDP step) it belongs to
  std::string state;   // "running" (inside the call) or "enqueued" (GPU work not done)
  std::vector<int> waiting_ranks, missing_ranks, completed_ranks;
  double waiting_since_s = 0;  // from the run's first collective to the first wait
  double waited_s = 0;         // the longest wait, to the last flush that saw it
  std::vector<MissingRank> missing;
  // Where each waiting or missing rank's main thread was when record asked
  // for its Python stacks (innermost first, "file:line in function"); only
  // the ranks that answered.
  struct Stack {
    int rank = 0;
    std::vector<std::string> frames;
    std::string user_frame;  // the innermost frame outside Python's and packages' own files
  };
  std::vector<Stack> stacks;
};

// The same sequence number on one communicator with a different op, dtype or
// element count on some ranks: ranks that called different collectives.
struct Mismatch {
  uint64_t comm_id = 0;
  uint64_t seq = 0;
  struct Shape {
    std::vector<int> ranks;
    Op op = Op::allreduce;
    Dtype dtype = Dtype::unknown;
    uint64_t count = 0;
  };
  std::vector<Shape> shapes;
};

// How far behind a rank runs: the larger of its median collective lateness and
// its median iteration-entry lateness (what the straggler card and rule use).
inline double straggle_ms(const RankStats& r) {
  return r.late_ms_median > r.iteration_late_ms_median ? r.late_ms_median
                                                       : r.iteration_late_ms_median;
}

// Who issued a collective, as far as the run tells (docs/analysis.md): a DDP
// gradient bucket, DDP's own control traffic (parameter checks, used-parameter
// maps, join flags, buffer broadcasts), the user's own torch.distributed call,
// or nobody we could name.
// FSDP's collectives carry its own three roles (fsdp_account.h).
enum class CollectiveRole : uint8_t {
  ddp_bucket,
  ddp_control,
  user,
  unknown,
  fsdp_all_gather,
  fsdp_reduce_scatter,
  fsdp_all_reduce
};
inline bool is_fsdp(CollectiveRole r) { return r >= CollectiveRole::fsdp_all_gather; }
const char* name_of(CollectiveRole role);

struct RoleStats {
  CollectiveRole role = CollectiveRole::unknown;
  uint64_t calls = 0;  // over every rank
  uint64_t bytes = 0;
  double total_ms = 0;  // summed execution time
};

// One DDP instance (the lowest recorded rank's account of it).
struct DdpInstanceSummary {
  int instance = 0;
  // "ddp": buckets and iterations from DDP's own account (the Python start-up
  // hook); "pattern": inferred from the repeating all-reduce sizes.
  std::string buckets_from = "pattern";
  std::string module;                           // the wrapped module's class
  uint64_t bucket_cap_bytes = 0;                // 0: unknown
  uint64_t first_bucket_bytes = 0;              // the first bucket's limit on rebuild
  bool explicit_cap_sets_first_bucket = false;  // this torch: bucket_cap_mb caps the first too
  bool find_unused_parameters = false, static_graph = false, gradient_as_bucket_view = false;
  std::string comm_hook;               // "" for DDP's default all-reduce
  bool rebuilt = false;                // DDP rebuilt its buckets during the run
  std::vector<uint64_t> bucket_bytes;  // DDP's layout, reduction order (rebuilt if it did)
  int parameters = 0;                  // tensors the reducer holds
  uint64_t parameter_bytes = 0;
};

struct Recommendation {
  std::string setting;  // e.g. "bucket_cap_mb", "NCCL_ALGO", "rank 3"
  std::string value;
  std::string reason;
};

// A span for the per-iteration timeline chart (a bounded sample of iterations).
struct TimelineSpan {
  int rank = 0;
  int iteration = 0;
  std::string kind;                 // "compute", "comm", "range"
  std::string name;                 // "bucket 2", a kernel or NVTX name
  double start_ms = 0, end_ms = 0;  // relative to the run's first recorded event
};

struct RunAnalysis {
  std::string path;
  std::string command;
  int world_size = 0;
  int ranks_recorded = 0;
  std::string backend;
  std::string timing;          // best timing source seen: cupti, event or host
  std::string compute_source;  // "kernels" or "backward-window" (CPU approximation)

  struct {
    int count = 0;   // iterations per rank (median over ranks), shadow ones excluded
    int warmup = 0;  // of which warm-up (before bucket rebuild)
    double median_ms = 0, p95_ms = 0, mean_ms = 0;
    double comm_median_ms = 0, exposed_median_ms = 0, busy_median_ms = 0;
    int shadow = 0;  // join() shadow iterations per rank (median over ranks)
    // FSDP's communication per step (busy time) and its exposed part; 0 without FSDP.
    double fsdp_comm_median_ms = 0, fsdp_exposed_median_ms = 0;
  } iterations;

  std::vector<FsdpRootStats> fsdp;  // empty: no FSDP2 account in the run

  std::vector<DdpInstanceSummary> ddp;  // empty: no DDP seen (pattern found nothing either)
  std::vector<RoleStats> roles;         // collectives by who issued them
  std::vector<IterationStats> iteration_list;
  std::vector<BucketStats> buckets;
  std::vector<SizeClassStats> collectives;
  std::vector<NcclChoiceStats> nccl_choices;  // empty: NCCL's profiler plugin did not run
  std::vector<OpSummary> ops;
  std::vector<RankStats> ranks;
  std::vector<Recommendation> recommendations;
  std::vector<TimelineSpan> timeline;
  // lateness[r][i]: ms rank r entered iteration i (its first bucket) late.
  std::vector<std::vector<double>> lateness;
  std::vector<Hang> hangs;  // empty: every collective every member entered completed
  std::vector<Mismatch> mismatches;
};

}  // namespace ddpscope::analysis
