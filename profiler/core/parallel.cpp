#include "profiler/core/parallel.h"

#include <algorithm>
#include <future>
#include <thread>
#include <vector>

namespace ddpscope::core {

int worker_threads(int at_most) {
  return std::clamp(int(std::thread::hardware_concurrency()), 1, std::max(1, at_most));
}

void parallel_runs(size_t items, int runs,
                   const std::function<void(size_t k, size_t first, size_t last)>& run) {
  const size_t n = size_t(std::max(1, runs));
  auto edge = [&](size_t k) { return items * k / n; };
  std::vector<std::future<void>> rest;
  for (size_t k = 1; k < n; ++k)
    rest.push_back(std::async(std::launch::async, [&, k] { run(k, edge(k), edge(k + 1)); }));
  // Every run is waited for before any exception leaves: they use the caller's state.
  std::exception_ptr first;
  try {
    run(0, edge(0), edge(1));
  } catch (...) {
    first = std::current_exception();
  }
  for (auto& r : rest) {
    try {
      r.get();
    } catch (...) {
      if (!first) first = std::current_exception();
    }
  }
  if (first) std::rethrow_exception(first);
}

}  // namespace ddpscope::core
