// Host time the injector adds to one intercepted NCCL call: the same loop of
// ncclAllReduce calls into the NCCL-ABI test library (a 1-rank communicator,
// so the library itself does almost nothing), run without and with
// libddpscope_inject.so preloaded. Reports the median over batches.
//
//   bench_hook_overhead [CALLS]      (default 2,000,000)
//   BENCH_INJECT_LIB=PATH bench_hook_overhead   another injector (an older build's, say)
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "bench/child_run.h"
#include "injector/nccl/nccl_api.h"
#include "profiler/core/clock.h"
#include "profiler/store/reader.h"
#include "tests/support/built_path.h"

namespace bench = ddpscope::bench;

namespace {

constexpr int kBatch = 1000;
constexpr long kBurst = 40000;   // calls per burst: fits the default 64Ki-event ring
constexpr int kPauseUs = 80000;  // time for the writer to flush a burst

// Runs `calls` all-reduces in batches; prints the median ns per call.
int inner(long calls) {
  // Real NCCL jobs are multi-threaded (NCCL's proxy threads, the framework's
  // own). The injector's writer thread makes this process multi-threaded too,
  // which alone makes glibc's malloc take locks in the test library's per-call
  // allocations; an idle thread in both runs keeps that out of our figure.
  std::thread idle([] { pause(); });
  idle.detach();
  ncclComm_t comm;
  if (ncclCommInitAll(&comm, 1, nullptr) != ncclSuccess) return 1;
  float x[4] = {};
  for (int i = 0; i < 20000; ++i) ncclAllReduce(x, x, 1, ncclFloat32, ncclSum, comm, nullptr);
  std::vector<double> per_call;
  for (long done = 0; done < calls; done += kBatch) {
    // Calls come in bursts, as a training step's do; between bursts the
    // writer thread drains the rings (it is not timed here: see
    // bench_store_throughput), so the ring in use stays warm in cache.
    if (done % kBurst == 0 && done) usleep(kPauseUs);
    int64_t t0 = ddpscope::clock::monotonic_ns();
    for (int i = 0; i < kBatch; ++i) ncclAllReduce(x, x, 1, ncclFloat32, ncclSum, comm, nullptr);
    per_call.push_back(double(ddpscope::clock::monotonic_ns() - t0) / kBatch);
  }
  std::sort(per_call.begin(), per_call.end());
  printf("%.2f %.2f %.2f\n", per_call[per_call.size() / 2], per_call[per_call.size() / 10],
         per_call[per_call.size() * 9 / 10]);
  ncclCommDestroy(comm);
  return 0;
}

const char* injector() {
  const char* other = getenv("BENCH_INJECT_LIB");
  return other && *other ? other : INJECT_LIB;
}

bench::Figures run_child(const char* self, long calls, bool inject, const std::string& out_dir) {
  if (!inject) return bench::run_inner(self, calls, {});
  // Default ring size; a flush interval short enough that every burst is
  // drained before the next, so nothing is dropped (checked below).
  return bench::run_inner(self, calls,
                          {{"LD_PRELOAD", injector()},
                           {"DDPSCOPE_OUT", out_dir},
                           {"DDPSCOPE_FLUSH_MS", "20"},
                           {"DDPSCOPE_QUIET", "1"}});  // no "no CUPTI here" notice per run
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 2 && strcmp(argv[1], "--inner") == 0) return inner(atol(argv[2]));
  long calls = argc > 1 ? atol(argv[1]) : 2000000;
  char tmpl[] = "/tmp/ddpscope-bench-XXXXXX";
  std::string dir = mkdtemp(tmpl);
  printf("hook overhead: %ld ncclAllReduce calls per run, NCCL-ABI test library, 1-rank comm, %s\n",
         calls, injector());
  printf("%-10s %12s %12s %12s\n", "run", "median ns", "p10 ns", "p90 ns");
  std::vector<double> base, with;
  for (int rep = 0; rep < 5; ++rep) {  // interleaved, so drift hits both alike
    bench::Figures a = run_child(argv[0], calls, false, dir);
    bench::Figures b = run_child(argv[0], calls, true, dir + "/" + std::to_string(rep));
    printf("%-10s %12.2f %12.2f %12.2f\n", "plain", a.median, a.p10, a.p90);
    ddpscope::store::RunReader db(dir + "/" + std::to_string(rep) + "/rank-0.db");
    printf("%-10s %12.2f %12.2f %12.2f   (%lld recorded, %llu dropped)\n", "injected", b.median,
           b.p10, b.p90, (long long)db.count("collectives"),
           (unsigned long long)db.processes().at(0).dropped_events);
    base.push_back(a.median);
    with.push_back(b.median);
  }
  std::sort(base.begin(), base.end());
  std::sort(with.begin(), with.end());
  printf("median per call: plain %.2f ns, injected %.2f ns, added %.2f ns (target <= 50 ns)\n",
         base[2], with[2], with[2] - base[2]);
  std::string cleanup = "rm -rf " + dir;
  return system(cleanup.c_str()) == 0 ? 0 : 1;
}
