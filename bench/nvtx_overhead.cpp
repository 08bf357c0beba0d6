// Host cost of one NVTX push/pop pair (nvtxRangePushA("step") + nvtxRangePop,
// NVTX3 header-only as torch uses it) without a tool attached and with
// libddpscope_inject.so attached through NVTX_INJECTION64_PATH. Reports the
// median over batches, five interleaved runs of each.
//
//   bench_nvtx_overhead [PAIRS]      (default 2,000,000)
#include <nvtx3/nvToolsExt.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench/child_run.h"
#include "profiler/core/clock.h"
#include "profiler/store/reader.h"
#include "tests/support/built_path.h"

namespace bench = ddpscope::bench;

namespace {

constexpr int kBatch = 1000;
constexpr long kBurst = 20000;   // pairs per burst: one event each, well inside the 64Ki ring
constexpr int kPauseUs = 80000;  // time for the writer to flush a burst

// Runs `pairs` push/pop pairs in batches; prints median, p10, p90 ns per pair.
int inner(long pairs) {
  for (int i = 0; i < 20000; ++i) {  // warm-up; the first call also loads the tool
    nvtxRangePushA("step");
    nvtxRangePop();
  }
  usleep(kPauseUs);
  std::vector<double> per_pair;
  for (long done = 0; done < pairs; done += kBatch) {
    // Bursts, as a training step's markers come; between bursts the writer
    // thread drains the ring (not timed here: see bench_store_throughput).
    if (done % kBurst == 0 && done) usleep(kPauseUs);
    int64_t t0 = ddpscope::clock::monotonic_ns();
    for (int i = 0; i < kBatch; ++i) {
      nvtxRangePushA("step");
      nvtxRangePop();
    }
    per_pair.push_back(double(ddpscope::clock::monotonic_ns() - t0) / kBatch);
  }
  std::sort(per_pair.begin(), per_pair.end());
  printf("%.2f %.2f %.2f\n", per_pair[per_pair.size() / 2], per_pair[per_pair.size() / 10],
         per_pair[per_pair.size() * 9 / 10]);
  return 0;
}

bench::Figures run_child(const char* self, long pairs, bool inject, const std::string& out_dir) {
  if (!inject) return bench::run_inner(self, pairs, {}, {"NVTX_INJECTION64_PATH"});
  return bench::run_inner(self, pairs,  // what `ddpscope record` sets
                          {{"LD_PRELOAD", INJECT_LIB},
                           {"NVTX_INJECTION64_PATH", INJECT_LIB},
                           {"DDPSCOPE_OUT", out_dir},
                           {"DDPSCOPE_RANK", "0"},
                           {"DDPSCOPE_FLUSH_MS", "20"}},
                          {"NVTX_INJECTION64_PATH"});
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 2 && strcmp(argv[1], "--inner") == 0) return inner(atol(argv[2]));
  long pairs = argc > 1 ? atol(argv[1]) : 2000000;
  char tmpl[] = "/tmp/ddpscope-bench-XXXXXX";
  std::string dir = mkdtemp(tmpl);
  printf("nvtx overhead: %ld nvtxRangePushA/nvtxRangePop pairs per run\n", pairs);
  printf("%-10s %12s %12s %12s\n", "run", "median ns", "p10 ns", "p90 ns");
  std::vector<double> base, with;
  for (int rep = 0; rep < 5; ++rep) {  // interleaved, so drift hits both alike
    std::string out = dir + "/" + std::to_string(rep);
    bench::Figures a = run_child(argv[0], pairs, false, dir);
    bench::Figures b = run_child(argv[0], pairs, true, out);
    printf("%-10s %12.2f %12.2f %12.2f\n", "no tool", a.median, a.p10, a.p90);
    ddpscope::store::RunReader db(out + "/rank-0.db");
    printf("%-10s %12.2f %12.2f %12.2f   (%lld ranges recorded, %llu dropped)\n", "ddpscope",
           b.median, b.p10, b.p90, (long long)db.count("ranges"),
           (unsigned long long)db.processes().at(0).dropped_events);
    base.push_back(a.median);
    with.push_back(b.median);
  }
  std::sort(base.begin(), base.end());
  std::sort(with.begin(), with.end());
  printf("median per push/pop pair: no tool %.2f ns, ddpscope %.2f ns, added %.2f ns\n", base[2],
         with[2], with[2] - base[2]);
  std::string cleanup = "rm -rf " + dir;
  return system(cleanup.c_str()) == 0 ? 0 : 1;
}
