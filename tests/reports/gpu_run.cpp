#include "tests/reports/gpu_run.h"

#include <algorithm>
#include <random>

#include "profiler/store/merge.h"
#include "profiler/store/writer.h"

namespace ddpscope::testing {
namespace {

constexpr int kBuckets = 4;
constexpr uint64_t kBucketBytes[kBuckets] = {25u << 20, 25u << 20, 15u << 20, 10u << 20};
constexpr double kCommBaseUs[kBuckets] = {1000, 1000, 600, 400};
constexpr uint64_t kComputeStream = 7, kNcclStream = 13, kCopyStream = 14;  // CUPTI's ids
constexpr uint64_t kNcclStreamHandle = 0x7f3a00001000;  // the cudaStream_t NCCL was given
constexpr uint64_t kCommId = 0x5eed0001;
constexpr int64_t kGpuWall = 1'760'000'000'000'000'000;  // one host: one clock offset

const char* const kForward[] = {
    "sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32_execute_kernel__5x_cublas",
    "void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl>",
    "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, MeanOps<float>>>"};
const char* const kBackward[] = {
    "sm90_xmma_gemm_f32f32_tf32f32_f32_nt_n_tilesize128x128x32_execute_kernel__5x_cublas",
    "void at::native::vectorized_elementwise_kernel<4, at::native::GeluBackwardCUDAKernelImpl>"};
const char* const kOptimizer =
    "void at::native::multi_tensor_apply_kernel<TensorListMetadata<4>, FusedAdamMathFunctor>";

// One rank's rows, built along its GPU timeline.
class RankBuilder {
 public:
  RankBuilder(int rank, int nranks, double comm_scale, uint32_t seed)
      : rank_(rank), nranks_(nranks), scale_(comm_scale), rng_(seed * 1009u + uint32_t(rank)) {
    t_ = 1'000'000'000 + rank * 123'457;  // this rank's monotonic clock
    start_ = t_;
  }

  void iteration() {
    t_ = kernel("memcpy HtoD", KernelKind::memcpy, kCopyStream, t_, us(40, 60)) + us(5, 10);
    for (int i = 0; i < 12; ++i)
      t_ = kernel(kForward[i % 3], KernelKind::compute, kComputeStream, t_, us(80, 300)) + us(2, 8);
    int64_t nccl_free = 0;  // NCCL kernels queue on their stream
    for (int b = 0; b < kBuckets; ++b) {
      for (int i = 0; i < 5; ++i)
        t_ = kernel(kBackward[i % 2], KernelKind::compute, kComputeStream, t_, us(300, 500)) +
             us(2, 8);
      nccl_free = bucket(b, std::max(t_ + us(3, 10), nccl_free));
    }
    t_ = std::max(t_, nccl_free) + us(10, 30);  // the optimizer waits for the last bucket
    for (int i = 0; i < 6; ++i)
      t_ = kernel(kOptimizer, KernelKind::compute, kComputeStream, t_, us(40, 90)) + us(2, 6);
    t_ = kernel("memset", KernelKind::memset, kComputeStream, t_, us(5, 15)) + us(200, 400);
  }

  void write(const std::string& path) const {
    store::RankWriter w(path, {{"kind", "rank"},
                               {"timeline", "monotonic"},
                               {"command_line", "python train.py (generated GPU-like run)"}});
    w.begin();
    w.add(CommRecord{rank_, kCommId, nranks_, rank_, rank_, Backend::nccl, 0, CommOrigin::init_rank,
                     start_, kNoTime, CommEnd::none});
    for (const auto& c : collectives_) w.add(c);
    for (const auto& k : kernels_) w.add(k);
    ProcessRecord p;
    p.rank = rank_;
    p.world_size = nranks_;
    p.local_rank = rank_;
    p.host = "gpu-node0";
    p.pid = 30000 + rank_;
    p.device = rank_;
    p.backend = Backend::nccl;
    p.clock_offset_ns = kGpuWall;
    p.start_ns = start_;
    p.end_ns = t_;
    w.put(p);
    w.commit();
    w.close();
  }

  int64_t kernels() const { return int64_t(kernels_.size()); }
  int64_t comm_kernels() const { return int64_t(collectives_.size()); }

 private:
  // A uniformly random duration in [lo, hi) microseconds, to the nanosecond.
  int64_t us(double lo, double hi) {
    return int64_t(std::uniform_real_distribution<double>(lo * 1e3, hi * 1e3)(rng_));
  }

  int64_t kernel(const char* name, KernelKind kind, uint64_t stream, int64_t start, int64_t dur,
                 int64_t collective = 0) {
    KernelRecord k;
    k.rank = rank_;
    k.device = rank_;
    k.stream = stream;
    k.name = name;
    k.start_ns = start;
    k.end_ns = start + dur;
    k.correlation = ++correlation_;
    k.collective_id = collective;
    k.kind = kind;
    kernels_.push_back(k);
    return k.end_ns;
  }

  // Bucket `b`'s all-reduce, its kernel starting at `start`: the host call
  // came earlier (the host runs ahead of the GPU). Returns the kernel's end.
  int64_t bucket(int b, int64_t start) {
    CollectiveRecord c;
    c.id = int64_t(collectives_.size()) + 1;
    c.rank = rank_;
    c.comm_id = kCommId;
    c.comm_rank = rank_;
    c.nranks = nranks_;
    c.seq = collectives_.size();
    c.op = Op::allreduce;
    c.dtype = Dtype::float32;
    c.redop = RedOp::sum;
    c.bytes = kBucketBytes[b];
    c.count = c.bytes / 4;
    c.stream = kNcclStreamHandle;
    c.tid = uint32_t(4000 + rank_);
    c.host_start_ns = start - us(150, 400);
    c.host_end_ns = c.host_start_ns + us(8, 20);
    c.start_ns = start;
    c.end_ns = kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL", KernelKind::comm, kNcclStream,
                      start, int64_t(kCommBaseUs[b] * scale_ * 1e3) + us(0, 50), c.id);
    c.timing = Timing::cupti;
    collectives_.push_back(c);
    return c.end_ns;
  }

  int rank_, nranks_;
  double scale_;
  std::mt19937 rng_;
  int64_t t_ = 0, start_ = 0;
  uint64_t correlation_ = 0;
  std::vector<KernelRecord> kernels_;
  std::vector<CollectiveRecord> collectives_;
};

}  // namespace

GpuRun make_gpu_run(const std::string& dir, const GpuRunSpec& spec) {
  GpuRun run;
  run.path = dir + "/run.db";
  run.iterations = spec.iterations;
  int nranks = int(spec.comm_scale.size());
  std::vector<std::string> files;
  for (int r = 0; r < nranks; ++r) {
    RankBuilder b(r, nranks, spec.comm_scale[size_t(r)], spec.seed);
    for (int i = 0; i < spec.iterations; ++i) b.iteration();
    files.push_back(dir + "/rank-" + std::to_string(r) + ".db");
    b.write(files.back());
    run.kernels.push_back(b.kernels());
    run.comm_kernels.push_back(b.comm_kernels());
  }
  store::merge_rank_files(files, run.path);
  return run;
}

}  // namespace ddpscope::testing
