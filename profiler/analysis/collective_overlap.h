// Per collective: how much of its device interval the compute kernels of the
// same rank (one rank drives one device) covered — a union of the compute
// kernels on every stream, never a sum. Needs GPU timing (kernels and
// cupti/event-timed collectives); collectives of a run without compute
// kernels come back with no figure.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "profiler/store/reader.h"

namespace ddpscope::analysis {

struct CollectiveOverlap {
  int64_t collective_id = 0;
  int32_t rank = 0;
  int64_t duration_ns = 0;  // end_ns - start_ns
  int64_t hidden_ns = 0;    // covered by compute on the rank's device
  double overlap_pct = 0;   // hidden / duration; 0 for a zero-length collective
};

// `where`: an optional SQL condition over the collectives table.
std::vector<CollectiveOverlap> collective_overlap(store::RunReader& reader,
                                                  const std::string& where = "");

}  // namespace ddpscope::analysis
