// FSDP2's own account as a capture source (fsdp_source.cpp): the regions and
// marks the start-up hook's builtins (fsdp_builtins.cpp) note.
#pragma once

#include <cstdint>

namespace ddpscope::inject::fsdp {

// One FsdpRegionKind (profiler/core/records.h) from t_begin to t_end,
// CLOCK_MONOTONIC ns. seq_end is the group's collective count after it (so
// it numbers seq_end - 1), -1 for a mark or where the group keeps none.
struct Region {
  int kind;
  int unit;
  int64_t pg_key;
  int64_t seq_end;
  uint32_t flags;
  int64_t t_begin, t_end;
};

// Into the calling thread's ring, as one fsdp_regions row.
void note(const Region& r);

}  // namespace ddpscope::inject::fsdp
