// What watching a running job costs `record` (its live line and
// --metrics-file, record/live_view.h): refreshes of the live window over
// the rank files in DIR, as record's process makes them. The first refresh
// reads every row the files hold (a watcher that starts late); the next ones
// find nothing new, the floor of a refresh: opening every file, the window's
// analysis. Prints each refresh's time, the rows it read, and the process's
// peak resident memory. Figures, never a test.
//
//   bench_live_watch --dir DIR [--window S] [--refreshes N]
//   (DIR from bench_gen_rank_files; bench/live_watch.sh does both)
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "profiler/store/merge.h"
#include "profiler/store/sqlite.h"
#include "record/live_view.h"

using namespace ddpscope;

namespace {

// The generated job's last event on the wall clock: "now" for the watcher.
int64_t job_end_ns(const std::string& dir) {
  int64_t end = INT64_MIN;
  for (const auto& f : store::find_rank_files(dir)) {
    store::Connection c(f, store::Connection::Mode::read_only);
    store::Statement s(c,
                       "SELECT max(c.host_end_ns) + p.clock_offset_ns FROM collectives c, "
                       "processes p");
    if (s.step()) end = std::max(end, s.int64(0));
  }
  return end;
}

double peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_maxrss) / 1024.0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir;
  double window_s = 30;
  int refreshes = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--dir")) dir = argv[i + 1];
    if (!strcmp(argv[i], "--window")) window_s = atof(argv[i + 1]);
    if (!strcmp(argv[i], "--refreshes")) refreshes = atoi(argv[i + 1]);
  }
  if (dir.empty()) {
    fprintf(stderr, "usage: bench_live_watch --dir DIR [--window S] [--refreshes N]\n");
    return 2;
  }
  int64_t now = job_end_ns(dir);
  record::LiveView watch(dir, window_s, dir + "/.bench-live.db");
  std::vector<double> steady;
  for (int i = 0; i < refreshes; ++i) {
    const auto& live = watch.refresh(now);
    printf(
        "refresh %d: %8.1f ms, %d rank files (%d unreadable), %zu iterations in the window, "
        "step %llu\n",
        i + 1, live.refresh_ms, live.files, live.unreadable, live.window.iteration_list.size(),
        (unsigned long long)live.steps);
    if (i > 0) steady.push_back(live.refresh_ms);
  }
  std::sort(steady.begin(), steady.end());
  if (!steady.empty())
    printf("nothing new: min %.1f ms, median %.1f ms, max %.1f ms over %zu refreshes\n",
           steady.front(), steady[steady.size() / 2], steady.back(), steady.size());
  printf("peak resident memory: %.0f MiB (window %.0f s)\n", peak_rss_mib(), window_s);
  return 0;
}
