// Writes the rank files of a DDP-like GPU job of N ranks, as the injector
// would have left them in `record -o DIR`, through the store's own writer:
// per iteration a forward pass of compute kernels, then backward, bucket by
// bucket (compute kernels, then the bucket's all-reduce launched on the host
// and run by an NCCL kernel on the comm stream, overlapping the next bucket's
// backward), then the optimizer once every all-reduce is done. An all-reduce
// ends together on every rank, after the last rank arrived; one rank arrives
// late on every bucket (the straggler the report must name), the others by a
// few microseconds of jitter. Hosts of 8 ranks each have their own monotonic
// clock (the merge puts them on one). Deterministic: same flags, same files.
//
//   bench_gen_rank_files --dir D [--ranks 1024] [--iterations 500]
//                        [--buckets 10] [--straggler R]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "profiler/store/writer.h"

using namespace ddpscope;

namespace {

struct Job {
  int ranks = 1024;
  int iterations = 500;
  int buckets = 10;
  int straggler = 3;
  int ranks_per_host = 8;
  // The shape of one iteration (ns).
  int64_t forward_kernel = 6'000'000;   // 4 of them
  int64_t backward_kernel = 2'000'000;  // 2 per bucket
  int64_t allreduce = 2'500'000;        // on the wire, once every rank is in
  int64_t optimizer = 4'000'000;
  int64_t straggler_delay = 8'000'000;  // per bucket
  int64_t period() const { return 40'000'000 + buckets * 8'000'000; }
};

// A reproducible jitter of 0..max ns per (rank, iteration, bucket).
int64_t jitter(int rank, int iteration, int bucket, int64_t max) {
  uint64_t x = uint64_t(rank) * 0x9E3779B97F4A7C15ull ^
               uint64_t(iteration) * 0xC2B2AE3D27D4EB4Full ^
               uint64_t(bucket) * 0x165667B19E3779F9ull;
  x ^= x >> 31;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 29;
  return int64_t(x % uint64_t(max + 1));
}

// When a rank's bucket is ready to all-reduce, relative to its iteration's
// start: forward, then its share of backward, then its own delays.
int64_t ready_at(const Job& j, int rank, int iteration, int bucket) {
  int64_t t = 4 * j.forward_kernel + (bucket + 1) * 2 * j.backward_kernel;
  t += jitter(rank, iteration, bucket, 50'000);
  if (rank == j.straggler) t += (bucket + 1) * j.straggler_delay / j.buckets + j.straggler_delay;
  return t;
}

// The last arrival of every (iteration, bucket): when every rank's kernel can run.
std::vector<int64_t> last_arrivals(const Job& j) {
  std::vector<int64_t> last(size_t(j.iterations) * j.buckets, 0);
  for (int r = 0; r < j.ranks; ++r)
    for (int i = 0; i < j.iterations; ++i)
      for (int b = 0; b < j.buckets; ++b) {
        int64_t& l = last[size_t(i) * j.buckets + b];
        l = std::max(l, ready_at(j, r, i, b));
      }
  return last;
}

uint64_t bucket_bytes(const Job& j, int bucket) {
  if (bucket == 0) return 1u << 20;  // DDP's small first bucket
  return bucket == j.buckets - 1 ? 9u << 20 : 25u << 20;
}

struct RankClock {
  int64_t wall_base = 1'795'000'000'000'000'000;  // Nov 2026, ns since 1970
  int64_t monotonic_base;                         // this host's boot
  int64_t to_local(int64_t wall) const { return wall - wall_base + monotonic_base; }
};

void write_rank(const Job& j, const std::vector<int64_t>& last, const std::string& dir, int rank) {
  const int host = rank / j.ranks_per_host;
  RankClock clock{.monotonic_base = 5'000'000'000'000 + int64_t(host) * 777'777'777};
  char path[512];
  snprintf(path, sizeof path, "%s/rank-%d.db", dir.c_str(), rank);
  store::RankWriter w(path, {{"kind", "rank"},
                             {"timeline", "monotonic"},
                             {"command_line", "python train.py (generated)"}});
  const uint64_t comm_id = 0x5eed0000c0ffee;
  const uint32_t tid = 1000 + uint32_t(rank);
  const uint64_t compute_stream = 7, comm_stream = 13;
  int64_t id = 0, correlation = 0;
  auto kernel = [&](const char* name, int64_t start, int64_t end, uint64_t stream, KernelKind kind,
                    int64_t collective) {
    w.add(KernelRecord{rank, rank % j.ranks_per_host, stream, name, clock.to_local(start),
                       clock.to_local(end), uint64_t(++correlation), collective, kind});
  };
  w.begin();
  w.add(CommRecord{rank, comm_id, j.ranks, rank, rank % j.ranks_per_host, Backend::nccl, 0,
                   CommOrigin::init_rank, clock.to_local(clock.wall_base), kNoTime, CommEnd::none});
  for (int i = 0; i < j.iterations; ++i) {
    const int64_t t0 = clock.wall_base + 1'000'000'000 + int64_t(i) * j.period();
    for (int k = 0; k < 4; ++k)
      kernel("sm90_xmma_gemm_fwd", t0 + k * j.forward_kernel, t0 + (k + 1) * j.forward_kernel,
             compute_stream, KernelKind::compute, 0);
    int64_t comm_free = t0;  // the comm stream runs one all-reduce at a time
    for (int b = 0; b < j.buckets; ++b) {
      const int64_t ready = t0 + ready_at(j, rank, i, b);
      for (int k = 2; k > 0; --k)
        kernel("sm90_xmma_gemm_bwd", ready - k * j.backward_kernel,
               ready - (k - 1) * j.backward_kernel, compute_stream, KernelKind::compute, 0);
      CollectiveRecord c;
      c.id = ++id;
      c.rank = rank;
      c.comm_id = comm_id;
      c.comm_rank = rank;
      c.nranks = j.ranks;
      c.seq = uint64_t(i) * j.buckets + b;
      c.dtype = Dtype::float32;
      c.redop = RedOp::sum;
      c.bytes = bucket_bytes(j, b);
      c.count = c.bytes / 4;
      c.stream = comm_stream;
      c.tid = tid;
      c.host_start_ns = clock.to_local(ready + 20'000);
      c.host_end_ns = c.host_start_ns + 8'000;
      const int64_t start = std::max(ready + 30'000, comm_free);
      c.start_ns = clock.to_local(start);
      comm_free = std::max(t0 + last[size_t(i) * j.buckets + b] + 30'000, comm_free) +
                  j.allreduce * int64_t(c.bytes >> 20) / 25;
      c.end_ns = clock.to_local(comm_free);
      c.timing = Timing::cupti;
      w.add(c);
      kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL", start, comm_free, comm_stream,
             KernelKind::comm, c.id);
    }
    const int64_t step_end = std::max(comm_free, t0 + ready_at(j, rank, i, j.buckets - 1));
    kernel("multi_tensor_apply_kernel", step_end, step_end + j.optimizer, compute_stream,
           KernelKind::compute, 0);
    if (i % 50 == 49) {  // the injector's flushes: one transaction each
      w.commit();
      w.begin();
    }
  }
  ProcessRecord p;
  p.rank = rank;
  p.world_size = j.ranks;
  p.local_rank = rank % j.ranks_per_host;
  char host_name[32];
  snprintf(host_name, sizeof host_name, "node-%04d", host);
  p.host = host_name;
  p.pid = 40000 + rank;
  p.device = rank % j.ranks_per_host;
  p.backend = Backend::nccl;
  p.clock_offset_ns = clock.wall_base - clock.monotonic_base;
  p.rank_source = "RANK";
  p.start_ns = clock.to_local(clock.wall_base);
  p.end_ns = clock.to_local(clock.wall_base + 2'000'000'000 + int64_t(j.iterations) * j.period());
  w.put(p);
  w.put_meta("closed", "1");
  w.commit();
  w.close();
}

int flag(int argc, char** argv, const char* name, int fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (!strcmp(argv[i], name)) return atoi(argv[i + 1]);
  return fallback;
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir;
  for (int i = 1; i + 1 < argc; ++i)
    if (!strcmp(argv[i], "--dir")) dir = argv[i + 1];
  Job j;
  j.ranks = flag(argc, argv, "--ranks", j.ranks);
  j.iterations = flag(argc, argv, "--iterations", j.iterations);
  j.buckets = flag(argc, argv, "--buckets", j.buckets);
  j.straggler = flag(argc, argv, "--straggler", j.straggler);
  if (dir.empty() || j.ranks < 1 || j.iterations < 1 || j.buckets < 2 || j.straggler >= j.ranks) {
    fprintf(stderr,
            "usage: %s --dir D [--ranks N] [--iterations I] [--buckets B>=2] [--straggler R<N]\n",
            argv[0]);
    return 2;
  }
  std::filesystem::create_directories(dir);
  auto t0 = std::chrono::steady_clock::now();
  const auto last = last_arrivals(j);
  for (int r = 0; r < j.ranks; ++r) write_rank(j, last, dir, r);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  long per_rank = long(j.iterations) * j.buckets;
  printf("generated %d rank files in %s: %ld collectives and %ld kernels each, in %.1f s\n",
         j.ranks, dir.c_str(), per_rank, per_rank * 3 + 5L * j.iterations, s);
  return 0;
}
