// Work shared among threads as contiguous runs of items, one run a thread,
// the caller's own thread taking the first: items next to each other (a
// rank's files, a table's rows) stay on one thread, and the runs' results
// are joined in order.
#pragma once

#include <cstddef>
#include <functional>

namespace ddpscope::core {

// Threads worth running: one per core, at least one, at most `at_most`.
int worker_threads(int at_most);

// Calls run(k, first, last) for k in [0, runs), [first, last) the k-th of
// `runs` near-equal runs of [0, items), all at once; returns when all have
// returned, rethrowing the first run's exception that any threw.
void parallel_runs(size_t items, int runs,
                   const std::function<void(size_t k, size_t first, size_t last)>& run);

}  // namespace ddpscope::core
