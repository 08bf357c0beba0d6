// `report --iterations A-B`: a part of the run named by iteration numbers
// instead of seconds. Iterations are numbered per rank (0-based, warm-up
// included, as the report and its JSON number them). The part is a time
// window on one rank's iterations: from the end of its iteration A-1's last
// DDP all-reduce (the run's start for A = 0) to the end of its iteration B's.
// An all-reduce cannot end before every rank launched it, and the next
// iteration's buckets come after the optimizer step that waits for it, so on
// every rank the window holds the launches of exactly iterations A..B's
// buckets (each rank's own clock aside: see docs/analysis.md on clocks).
#pragma once

#include <string>
#include <vector>

#include "profiler/store/reader.h"

namespace ddpscope::analysis {

struct IterationWindow {
  int rank = 0;  // whose iterations number the window
  int first = 0, last = 0;
  int64_t since_ns = 0, until_ns = 0;  // on the run's timeline
};

// `spec`: "A-B" or "A". `ranks`: the ranks the report looks at (empty: all);
// the lowest of them that the run has numbers the iterations. Throws
// InputError naming --iterations for a malformed spec or iterations the rank
// does not have. Leaves the reader's filter as it found it.
IterationWindow iteration_window(store::RunReader& reader, const std::string& spec,
                                 const std::vector<int>& ranks);

}  // namespace ddpscope::analysis
