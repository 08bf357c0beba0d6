// core/parallel.h: every item once, in runs that keep neighbours together,
// and a run's exception passed on only after every run has ended.
#include <atomic>
#include <catch2/catch.hpp>
#include <stdexcept>
#include <vector>

#include "profiler/core/parallel.h"

using namespace ddpscope;

TEST_CASE("parallel_runs: each item in exactly one run, runs contiguous and in order") {
  for (size_t items : {0, 1, 5, 1000})
    for (int runs : {1, 2, 3, 7}) {
      std::vector<std::pair<size_t, size_t>> seen(size_t(runs), {SIZE_MAX, SIZE_MAX});
      std::vector<std::atomic<int>> hits(items);
      core::parallel_runs(items, runs, [&](size_t k, size_t first, size_t last) {
        seen[k] = {first, last};
        for (size_t i = first; i < last; ++i) ++hits[i];
      });
      INFO(items << " items, " << runs << " runs");
      for (size_t i = 0; i < items; ++i) CHECK(hits[i] == 1);
      CHECK(seen.front().first == 0);
      CHECK(seen.back().second == items);
      for (size_t k = 1; k < seen.size(); ++k) CHECK(seen[k].first == seen[k - 1].second);
    }
}

TEST_CASE("parallel_runs: the lowest run's exception, after every run ended") {
  std::atomic<int> ended{0};
  auto run = [&](size_t k, size_t, size_t) {
    ++ended;
    if (k >= 1) throw std::runtime_error("run " + std::to_string(k));
  };
  CHECK_THROWS_WITH(core::parallel_runs(40, 4, run), "run 1");
  CHECK(ended == 4);
}

TEST_CASE("worker_threads: at least one, at most the bound") {
  CHECK(core::worker_threads(1) == 1);
  CHECK(core::worker_threads(0) == 1);
  CHECK(core::worker_threads(4) >= 1);
  CHECK(core::worker_threads(4) <= 4);
}
