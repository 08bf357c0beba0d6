// DDP's own account as a capture source (ddp_source.cpp): the regions the
// start-up hook notes, through ctypes or its builtins (region_builtins.cpp).
#pragma once

#include <cstdint>

namespace ddpscope::inject::ddp {

// One DdpRegionKind (profiler/core/records.h) from t_begin to t_end, in the
// capture clock's raw ticks (now()); seq_begin and seq_end are the group's
// collective counts before and after it, -1 where the group keeps none.
struct Region {
  int kind;
  int instance;
  int bucket;
  int64_t pg_key;
  int64_t seq_begin, seq_end;
  uint32_t flags;
  uint64_t t_begin, t_end;
};

// The capture clock's raw ticks.
uint64_t now();

// Into the calling thread's ring, as one ddp_regions row.
void note(const Region& r);

}  // namespace ddpscope::inject::ddp
