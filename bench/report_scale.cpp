// Analysis and every renderer on a large generated run: 1M collectives and 5M
// kernels over 8 ranks (DDP-like: 25 buckets per iteration, compute kernels
// between bucket launches). Prints the time of each stage and the peak
// resident memory. Target: analysis + all renderers <= 10 s, bounded memory.
// Rank files are written through store::RankWriter as the injector writes
// them (kernels as rows and as kernel_blocks), then merged.
// The trace is written in the format `--trace run.trace` picks for this size
// (Perfetto protobuf), then once more as JSON to compare: target, the
// protobuf at most 1/4 of the JSON's size. The JSON is not in the total.
//
//   bench_report_scale [--collectives N] [--kernels-per-collective K] [--dir D] [--keep]
//
// --keep leaves the run and every output under D (printed at the end).
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include "profiler/analysis/analyze.h"
#include "profiler/store/merge.h"
#include "profiler/store/schema.h"
#include "profiler/store/writer.h"
#include "reports/renderer.h"
#include "reports/trace/zlib_deflate.h"

using namespace ddpscope;
namespace fs = std::filesystem;

namespace {

constexpr int kRanks = 8;
constexpr int kBuckets = 25;

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Resident memory now, split into the heap (anonymous) and mapped files (the
// database pages SQLite maps: the OS's file cache, reclaimable).
std::string rss_split() {
  FILE* f = fopen("/proc/self/status", "r");
  char line[256];
  long anon = 0, file = 0;
  while (f && fgets(line, sizeof line, f)) {
    sscanf(line, "RssAnon: %ld", &anon);
    sscanf(line, "RssFile: %ld", &file);
  }
  if (f) fclose(f);
  return "anon " + std::to_string(anon / 1024) + " MiB, file " + std::to_string(file / 1024) +
         " MiB";
}

// CPU seconds of the whole process (every thread), user and system: beside
// the wall time, what a stage costs on a machine shared with other work.
double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  auto s = [](timeval t) { return double(t.tv_sec) + double(t.tv_usec) / 1e6; };
  return s(u.ru_utime) + s(u.ru_stime);
}

long peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024;
}

// One rank's file: iterations of kBuckets all-reduces, each preceded by
// `kernels` compute kernels, plus one comm kernel per all-reduce.
void write_rank(const std::string& path, int rank, long collectives, int kernels) {
  store::RankWriter w(path,
                      {{"kind", "rank"}, {"timeline", "monotonic"}, {"command_line", "bench"}});
  w.begin();
  CommRecord comm{rank, 42, 8, rank, rank, Backend::nccl, 0, CommOrigin::init_rank, 0};
  w.add(comm);
  int64_t t = 1'000'000'000;
  std::vector<std::array<int64_t, 3>> kernel_rows;
  for (long i = 0; i < collectives; ++i) {
    int b = int(i % kBuckets);
    if (b == 0) t += 20'000'000;  // forward + optimizer
    for (int k = 0; k < kernels; ++k, t += 40'000) kernel_rows.push_back({t, t + 35'000, 0});
    CollectiveRecord c;
    c.rank = rank;
    c.comm_id = 42;
    c.comm_rank = rank;
    c.nranks = kRanks;
    c.seq = uint64_t(i);
    c.bytes = b == 0 ? (1u << 20) : (25u << 20);
    c.count = c.bytes / 4;
    c.dtype = Dtype::float32;
    c.redop = RedOp::sum;
    c.host_start_ns = t + rank * 1000;
    c.host_end_ns = c.host_start_ns + 5000;
    c.start_ns = t + 10'000;
    c.end_ns = t + 10'000 + 900'000 + (b == kBuckets - 1) * 2'000'000;
    c.timing = Timing::cupti;
    w.add(c);
    kernel_rows.push_back({c.start_ns, c.end_ns, 1});
  }
  ProcessRecord p;
  p.rank = rank;
  p.world_size = kRanks;
  p.host = "node" + std::to_string(rank / 4);
  p.backend = Backend::nccl;
  w.put(p);
  // Through the writer, as the injector writes them: rows and blocks.
  const std::string comm_name = "ncclDevKernel_AllReduce_Sum_f32_RING_LL", gemm = "sm90_xmma_gemm";
  for (const auto& row : kernel_rows) {
    const bool comm_kernel = row[2] != 0;
    w.add(KernelRecord{.rank = rank,
                       .device = rank,
                       .stream = comm_kernel ? 2u : 1u,
                       .name = comm_kernel ? comm_name : gemm,
                       .start_ns = row[0],
                       .end_ns = row[1],
                       .kind = comm_kernel ? KernelKind::comm : KernelKind::compute});
  }
  w.commit();
  w.close();
}

}  // namespace

int main(int argc, char** argv) {
  long collectives = 1'000'000;
  int kernels = 4;  // compute kernels per collective: + 1 comm kernel = 5M kernels for 1M
  std::string dir = "/tmp";
  bool keep = false;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--keep")) keep = true;
    if (i + 1 == argc) break;
    if (!strcmp(argv[i], "--collectives")) collectives = atol(argv[i + 1]);
    if (!strcmp(argv[i], "--kernels-per-collective")) kernels = atoi(argv[i + 1]);
    if (!strcmp(argv[i], "--dir")) dir = argv[i + 1];
  }
  std::string root = dir + "/ddpscope-report-scale-" + std::to_string(getpid());
  fs::create_directories(root);
  auto t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < kRanks; ++r)
    write_rank(root + "/rank-" + std::to_string(r) + ".db", r, collectives / kRanks, kernels);
  store::merge_rank_files(store::find_rank_files(root), root + "/run.db");
  printf("generated %ld collectives, %ld kernels on %d ranks in %.1f s\n", collectives,
         collectives * (kernels + 1), kRanks, seconds_since(t0));

  store::RunReader reader(root + "/run.db");
  auto t = std::chrono::steady_clock::now();
  double cpu = cpu_seconds();
  // As `report --trace` runs it: the analysis keeps the collectives it read
  // and their labels for the trace.
  CollectiveRuns kept;
  analysis::CollectiveLabels labels;
  analysis::AnalysisOptions options;
  options.keep_collectives = &kept;
  options.keep_labels = &labels;
  auto run = analysis::analyze_run(reader, options);
  double analysis_s = seconds_since(t);
  printf(
      "%-10s %8.2f s   (cpu %.2f s, %d iterations/rank, %zu buckets, %zu labelled "
      "collectives, peak RSS %ld MiB)\n",
      "analysis", analysis_s, cpu_seconds() - cpu, run.iterations.count, run.buckets.size(),
      labels.size(), peak_rss_mib());
  double total = analysis_s;
  struct Format {
    const char* name;
    std::unique_ptr<reports::Renderer> r;
    std::string target;
  } formats[] = {{"csv", reports::make_csv_renderer(), root + "/csv"},
                 {"json", reports::make_json_renderer(), root + "/report.json"},
                 {"trace", reports::make_trace_renderer(), root + "/run.trace"},
                 {"html", reports::make_html_renderer(), root + "/report.html"},
                 {"trace-json", reports::make_trace_renderer(), root + "/trace.json"}};
  std::uintmax_t trace_bytes[2] = {0, 0};  // as chosen, as JSON
  for (auto& f : formats) {
    t = std::chrono::steady_clock::now();
    cpu = cpu_seconds();
    f.r->write({run, reader, &kept, &labels}, f.target);
    double s = seconds_since(t);
    cpu = cpu_seconds() - cpu;
    bool comparison = f.target.ends_with("trace.json");
    if (!comparison) total += s;
    std::error_code ec;
    auto size = fs::is_directory(f.target) ? 0 : fs::file_size(f.target, ec);
    if (f.target.ends_with(".trace") || comparison) trace_bytes[comparison] = size;
    std::string note = f.r->note();
    printf("%-10s %8.2f s   (cpu %.2f s, %.1f MiB%s, peak RSS %ld MiB)\n", f.name, s, cpu,
           double(size) / (1 << 20), note.empty() ? "" : (", " + note).c_str(), peak_rss_mib());
  }
  printf(
      "total      %8.2f s   (target <= 10 s, without trace-json), peak RSS %ld MiB "
      "(at the end: %s)\n",
      total, peak_rss_mib(), rss_split().c_str());
  printf("trace size: protobuf / JSON = %.3f (target <= 0.25), deflated by %s\n",
         double(trace_bytes[0]) / double(std::max<std::uintmax_t>(trace_bytes[1], 1)),
         reports::proto::ZlibDeflate().library());
  if (keep)
    printf("kept %s\n", root.c_str());
  else
    fs::remove_all(root);
  return 0;
}
