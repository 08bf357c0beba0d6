// GPU records in the store: kernels, ranges and syncs round-trip; merge keeps
// each kernel pointing at its collective while renumbering; per-collective
// overlap is the union of compute kernels on every stream, not a sum, and so
// is each rank's kernel overlap (HTA's definition).
#include <catch2/catch.hpp>
#include <cmath>

#include "profiler/analysis/analyze.h"
#include "profiler/analysis/collective_overlap.h"
#include "profiler/analysis/kernel_overlap.h"
#include "profiler/analysis/rank_view.h"
#include "profiler/store/merge.h"
#include "profiler/store/reader.h"
#include "profiler/store/writer.h"
#include "tests/support/subprocess.h"

using namespace ddpscope;
using namespace ddpscope::store;

namespace {

CollectiveRecord gpu_collective(int rank, int64_t id, int64_t start, int64_t end) {
  CollectiveRecord c;
  c.id = id;
  c.rank = rank;
  c.comm_id = 77;
  c.nranks = 2;
  c.seq = uint64_t(id);
  c.bytes = 4096;
  c.host_start_ns = start - 50;
  c.host_end_ns = start - 40;
  c.start_ns = start;
  c.end_ns = end;
  c.timing = Timing::cupti;
  return c;
}

KernelRecord kernel(int rank, KernelKind kind, int64_t start, int64_t end, int64_t collective = 0,
                    uint64_t stream = 7) {
  KernelRecord k;
  k.rank = rank;
  k.device = rank;
  k.stream = stream;
  k.name = kind == KernelKind::comm ? "ncclDevKernel_AllReduce_Sum_f32_RING_LL" : "gemm";
  k.start_ns = start;
  k.end_ns = end;
  k.correlation = 1;
  k.collective_id = collective;
  k.kind = kind;
  return k;
}

// One rank file with collectives [1000,2000) and [5000,6000), their comm
// kernels, and compute kernels around them.
void write_gpu_rank(const std::string& path, int rank, int64_t offset,
                    const std::vector<KernelRecord>& compute) {
  RankWriter w(path, {{"kind", "rank"}, {"timeline", "monotonic"}});
  w.begin();
  w.add(gpu_collective(rank, 1, 1000, 2000));
  w.add(gpu_collective(rank, 2, 5000, 6000));
  w.add(kernel(rank, KernelKind::comm, 1000, 2000, 1, 9));
  w.add(kernel(rank, KernelKind::comm, 5000, 6000, 2, 9));
  for (const auto& k : compute) w.add(k);
  w.add(RangeRecord{rank, 11, "app", "step 0", 900, 6100});
  w.add(SyncRecord{rank, 11, SyncCall::stream_synchronize, 9, 6000, 6050});
  ProcessRecord p;
  p.rank = rank;
  p.world_size = 2;
  p.clock_offset_ns = offset;
  w.put(p);
  w.commit();
  w.close();
}

int64_t kernel_target(RunReader& r, int rank, int64_t start) {
  Statement st(r.connection(), "SELECT collective_id FROM kernels WHERE rank = ? AND start_ns = ?");
  st.bind(1, int64_t(rank));
  st.bind(2, start);
  return st.step() ? st.int64(0) : -1;
}

}  // namespace

TEST_CASE("kernels, ranges and syncs round-trip, and merge keeps kernels on their collective") {
  auto dir = testing::temp_dir("gpu-merge");
  write_gpu_rank(dir + "/rank-0.db", 0, 0, {});
  write_gpu_rank(dir + "/rank-1.db", 1, 100000, {});
  {
    RunReader r(dir + "/rank-1.db");
    CHECK(r.count("kernels") == 2);
    CHECK(r.collectives()[1].id == 2);
    Statement st(r.connection(), "SELECT domain, name, tid FROM ranges");
    REQUIRE(st.step());
    CHECK(st.text(0) == "app");
    CHECK(st.text(1) == "step 0");
    Statement sy(r.connection(), "SELECT call, stream, end_ns - start_ns FROM syncs");
    REQUIRE(sy.step());
    CHECK(sy.text(0) == "cudaStreamSynchronize");
    CHECK(sy.int64(2) == 50);
  }
  merge_rank_files(find_rank_files(dir), dir + "/run.db");
  RunReader run(dir + "/run.db");
  for (int rank : {0, 1}) {
    int64_t off = rank ? 100000 : 0;
    for (int64_t start : {1000, 5000}) {
      int64_t target = kernel_target(run, rank, start + off);
      auto c = run.collectives("id = " + std::to_string(target));
      REQUIRE(c.size() == 1);
      CHECK(c[0].rank == rank);
      CHECK(c[0].start_ns == start + off);
    }
  }
}

// Compute for both overlap cases: [900,1200) on stream 1 and [1100,1300) on
// stream 2 (their union 900-1300), nested [1500,1600), adjacent [2000,2100),
// disjoint [7000,8000).
std::vector<KernelRecord> overlap_compute() {
  return {kernel(0, KernelKind::compute, 900, 1200, 0, 1),
          kernel(0, KernelKind::compute, 1100, 1300, 0, 2),
          kernel(0, KernelKind::compute, 1500, 1600, 0, 1),
          kernel(0, KernelKind::compute, 2000, 2100, 0, 1),
          kernel(0, KernelKind::compute, 7000, 8000, 0, 1)};
}

TEST_CASE("collective overlap: nested, adjacent, disjoint and several streams") {
  auto dir = testing::temp_dir("gpu-overlap");
  std::string path = dir + "/rank-0.db";
  // Collective 1 [1000,2000): compute [900,1200) on stream 1, [1100,1300) on
  // stream 2 (overlapping: union 900-1300 -> 300 hidden), nested [1500,1600),
  // adjacent [2000,2100) (touches, hides nothing). Collective 2 [5000,6000):
  // only disjoint compute [7000,8000).
  write_gpu_rank(path, 0, 0, overlap_compute());
  RunReader r(path);
  auto o = analysis::collective_overlap(r);
  REQUIRE(o.size() == 2);
  CHECK(o[0].collective_id == 1);
  CHECK(o[0].duration_ns == 1000);
  CHECK(o[0].hidden_ns == 300 + 100);
  CHECK(o[0].overlap_pct == Approx(40.0));
  CHECK(o[1].hidden_ns == 0);
  CHECK(o[1].overlap_pct == 0.0);
}

TEST_CASE("collective overlap needs compute kernels: none on a CPU run") {
  auto dir = testing::temp_dir("gpu-none");
  std::string path = dir + "/rank-0.db";
  write_gpu_rank(path, 0, 0, {});
  RunReader r(path);
  CHECK(analysis::collective_overlap(r).empty());
}

TEST_CASE("kernel overlap per rank: comm kernels' union against compute's, and device spans") {
  auto dir = testing::temp_dir("gpu-kernel-overlap");
  std::string path = dir + "/rank-0.db";
  // Comm kernels [1000,2000) and [5000,6000): 2000 ns. Compute on two
  // streams, 900-1200 and 1100-1300, covers 1000-1300 once (300), 1500-1600
  // adds 100, the adjacent [2000,2100) and [7000,8000) nothing: 400 of 2000.
  write_gpu_rank(path, 0, 0, overlap_compute());
  RunReader r(path);
  auto kernels = analysis::kernel_intervals(r);
  auto& comm = kernels.comm;
  REQUIRE(comm.size() == 1);
  CHECK(comm[0].size() == 2);
  std::vector<analysis::Interval> compute;
  for (auto& k : r.rows<KernelRecord>("kind = 'compute'"))
    compute.push_back({k.start_ns, k.end_ns});
  // One pass reads both kinds: compute's rows are compute's, in the table's order.
  REQUIRE(kernels.compute.size() == 1);
  CHECK(kernels.compute[0] == compute);
  auto o = analysis::kernel_overlap(comm[0], analysis::union_of(compute));
  CHECK(o.comm_ns == 2000);
  CHECK(o.overlapped_ns == 400);
  CHECK(o.pct() == Approx(20.0));
  // The same through the whole analysis, per rank in the report.
  auto run = analysis::analyze_run(r);
  REQUIRE(run.ranks.size() == 1);
  CHECK(run.ranks[0].kernel_overlap_pct == Approx(20.0));
  // No device communication: no figure.
  CHECK(std::isnan(analysis::kernel_overlap({}, analysis::union_of(compute)).pct()));
}

TEST_CASE("kernel overlap counts collectives timed on the device without kernel rows") {
  auto dir = testing::temp_dir("gpu-event-overlap");
  std::string path = dir + "/rank-0.db";
  {
    RankWriter w(path, {{"kind", "rank"}, {"timeline", "monotonic"}});
    w.begin();
    CollectiveRecord c = gpu_collective(0, 1, 10000, 11000);
    c.timing = Timing::event;  // CUDA events: no kernels, a device span
    w.add(c);
    CollectiveRecord host = gpu_collective(0, 2, 20000, 21000);
    host.timing = Timing::host;  // only the host call: not device communication
    w.add(host);
    w.add(kernel(0, KernelKind::compute, 10500, 12000, 0, 1));
    ProcessRecord p;
    p.world_size = 1;
    w.put(p);
    w.commit();
    w.close();
  }
  RunReader r(path);
  CHECK(analysis::kernel_intervals(r).comm.empty());
  auto c = r.collectives();
  REQUIRE(c.size() == 2);
  CHECK(analysis::device_span_without_kernels(c[0]));
  CHECK_FALSE(analysis::device_span_without_kernels(c[1]));
  auto run = analysis::analyze_run(r);
  REQUIRE(run.ranks.size() == 1);
  CHECK(run.ranks[0].kernel_overlap_pct == Approx(50.0));
}
