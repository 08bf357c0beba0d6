#include "tests/html/html_fixture.h"

#include <cmath>
#include <fstream>
#include <sstream>

#include "profiler/store/reader.h"
#include "profiler/store/writer.h"
#include "reports/renderer.h"

namespace ddpscope::html_test {
namespace {

using analysis::RunAnalysis;
using analysis::TimelineSpan;

constexpr double kIterMs = 120;
constexpr uint64_t MiB = 1 << 20;

// One rank's iteration as a DDP step looks: forward kernels under an NVTX
// range, backward kernels with the buckets' all-reduces overlapping them, the
// last bucket exposed after backward, then the optimizer. Rank 2 computes 7%
// slower: the straggler.
void add_iteration_spans(RunAnalysis& run, int rank, int it) {
  double base = it * kIterMs, slow = rank == 2 ? 1.07 : 1.0;
  auto span = [&](const char* kind, std::string name, double from, double to) {
    run.timeline.push_back({rank, it, kind, std::move(name), base + from * slow, base + to * slow});
  };
  span("range", "forward", 0, 35);
  for (int k = 0; k < 7; ++k)
    span("compute", "sm90_gemm_fwd_" + std::to_string(k), k * 5, k * 5 + 4.2);
  for (int k = 0; k < 11; ++k) {
    // One kernel name that would end the page's data <script> if not escaped.
    std::string name =
        k == 4 ? "fused</script><b>x</b>_kernel" : "autograd_bwd_" + std::to_string(k);
    span("compute", name, 36 + k * 6, 36 + k * 6 + 5.5);
  }
  const double comm[4][2] = {{55, 63}, {66, 76}, {80, 92}, {101, 110}};
  for (int b = 0; b < 4; ++b) span("comm", "bucket " + std::to_string(b), comm[b][0], comm[b][1]);
  span("compute", "optimizer.step", 111, 117);
}

void add_iterations(RunAnalysis& run) {
  for (int r = 0; r < 3; ++r) {
    for (int i = 0; i < 6; ++i) {
      analysis::IterationStats s;
      s.rank = r;
      s.index = i;
      s.warmup = i == 0;
      s.start_ns = int64_t(i * kIterMs * 1e6);
      s.end_ns = int64_t((i + 1) * kIterMs * 1e6);
      s.iter_ms = i == 5 ? 0 : kIterMs + (i == 0 ? 40 : 0.3 * r);
      s.comm_ms = 55 + 0.5 * r;
      s.comm_busy_ms = 39;
      s.exposed_ms = r == 2 ? 3.1 : 10.4;
      s.buckets = i == 0 ? 5 : 4;
      run.iteration_list.push_back(s);
    }
  }
}

void add_buckets_and_sizes(RunAnalysis& run) {
  const uint64_t bytes[] = {1 * MiB, 25 * MiB, 25 * MiB, 14 * MiB};
  const double us[] = {800, 8000, 10000, 9000}, hidden[] = {100, 95, 80, 10};
  for (int b = 0; b < 4; ++b) {
    double busbw = 2.0 * 2 / 3 * double(bytes[b]) / (us[b] * 1e3);
    run.buckets.push_back({b, bytes[b], 15, us[b], us[b] * 1.2, busbw * 3 / 4, busbw, hidden[b],
                           us[b] * (100 - hidden[b]) / 100, b ? 9000.0 : 0.0, 0, ""});
  }
  auto size = [&](Op op, uint64_t b, double median_us, double factor) {
    double algbw = double(b) / (median_us * 1e3);
    run.collectives.push_back({op, b, 3, 18, median_us, median_us * 1.3, algbw, algbw * factor});
  };
  for (uint64_t b : {uint64_t{4096}, uint64_t{65536}, 1 * MiB, 14 * MiB, 25 * MiB}) {
    size(Op::allreduce, b, 20 + double(b) / 180e3, 4.0 / 3);
  }
  size(Op::broadcast, 256, 12, 1);
  size(Op::broadcast, 1 * MiB, 90, 1);
  size(Op::allgather, 8, 11, 2.0 / 3);
  size(Op::allgather, 64, 12, 2.0 / 3);
}

void add_ranks(RunAnalysis& run) {
  for (int r = 0; r < 3; ++r) {
    analysis::RankStats s;
    s.rank = r;
    s.host = "node" + std::to_string(r / 2);
    s.late_ms_median = r == 2 ? 7.9 : 0.1 * r;
    s.late_ms_p95 = s.late_ms_median * 1.2;
    s.late_ms_max = s.late_ms_median * 1.5;
    s.last_share_pct = r == 2 ? 94 : 3;
    s.clock_correction_us = r * 12.5;
    s.iter_ms_median = kIterMs;
    s.comm_ms_median = 55;
    s.collectives = 90;
    s.dropped_events = r == 1 ? 7 : 0;
    run.ranks.push_back(s);
    std::vector<double> late;
    for (int i = 0; i < 6; ++i) late.push_back(r == 2 ? 6.5 + 0.5 * i : 0.05 * (i + r));
    run.lateness.push_back(late);
  }
}

}  // namespace

RunAnalysis sample_run() {
  RunAnalysis run;
  run.path = "/runs/resnet50-3gpu/run.db";
  run.command = "torchrun --nproc-per-node 3 train.py --model \"resnet50\" --bucket-cap-mb 25";
  run.world_size = run.ranks_recorded = 3;
  run.backend = "nccl";
  run.timing = "cupti";
  run.compute_source = "kernels";
  run.iterations = {6, 1, 120.3, 160, 127, 55.5, 10.4, 39};
  add_iterations(run);
  for (int it : {1, 2, 5}) {
    for (int r = 0; r < 3; ++r) add_iteration_spans(run, r, it);
  }
  add_buckets_and_sizes(run);
  run.ops.push_back({Op::allreduce, 3, 75, 1200 * MiB, 650, 8000, 10500, 1.8, 2.4, Timing::cupti});
  run.ops.push_back({Op::broadcast, 3, 6, 3 * MiB, 0.6, 50, 90, 5.1, 5.1, Timing::cupti});
  add_ranks(run);
  run.recommendations.push_back(
      {"bucket_cap_mb", "50",
       "Bucket 3 is 90% exposed after backward; larger buckets overlap more of it."});
  run.recommendations.push_back(
      {"rank 2", "check host node1",
       "Rank 2 enters collectives 7.9 ms late: <script>alert(\"x\")</script> & 'quoted'"});
  return run;
}

RunAnalysis empty_run() {
  RunAnalysis run;
  run.path = "/runs/empty/run.db";
  run.command = "python eval.py";
  run.world_size = run.ranks_recorded = 2;
  run.backend = "gloo";
  run.timing = "host";
  run.compute_source = "backward-window";
  return run;
}

RunAnalysis large_run(int ranks, int iterations) {
  RunAnalysis run = sample_run();
  run.iteration_list.clear();
  run.lateness.assign(ranks, std::vector<double>(iterations, 0.2));
  run.ranks.clear();
  for (int r = 0; r < ranks; ++r) {
    for (int i = 0; i < iterations; ++i) {
      run.iteration_list.push_back({r, i, false, 0, 0, kIterMs, 55, 39, 10, 4});
      run.lateness[r][i] = r == 7 ? 5 + std::sin(i * 0.01) : 0.1 * std::cos(i + r);
    }
    run.ranks.push_back(
        {r, "node" + std::to_string(r / 8), 0.1, 0.2, 0.3, 1, 0, kIterMs, 55, 1000, 0});
  }
  run.timeline.clear();
  for (int i = 0; run.timeline.size() < 30000; ++i) {
    for (int r = 0; r < ranks; ++r) add_iteration_spans(run, r, i);
  }
  run.iterations.count = iterations;
  return run;
}

std::string render(const RunAnalysis& run, const std::string& dir) {
  std::string db = dir + "/rank-0.db";
  store::RankWriter writer(db, {{"kind", "rank"}, {"timeline", "monotonic"}});
  writer.close();
  store::RunReader reader(db);
  std::string out = dir + "/report.html";
  reports::make_html_renderer()->write({run, reader}, out);
  return out;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace ddpscope::html_test
