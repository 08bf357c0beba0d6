// What the injector saw but could not record in full, counted per process and
// written into the rank file as meta rows `count:<name>` (docs/schema.md); merge
// sums them over ranks. Each count is declared once, in the list below, with
// what it means. They are bumped on cold paths only (a relaxed add).
#pragma once

#include <cstdint>

namespace ddpscope::inject {

#define DDPSCOPE_COUNTERS(X)                                                                      \
  X(names_overflowed)           /* names the name table had no room for (recorded as a marker) */ \
  X(unknown_dtype_calls)        /* NCCL calls with a datatype newer than ours: 0 bytes */         \
  X(graph_captured_collectives) /* NCCL calls captured into a CUDA graph: not recorded */         \
  X(untimed_collectives)        /* CUDA events could not time them: written host-timed */         \
  X(stream_ordered_collectives) /* no CUPTI record; a later one on its stream done: host-timed */ \
  X(unconfirmed_collectives)    /* past the cap of those in flight under CUPTI: host-timed */     \
  X(cupti_buffers_refused)      /* CUPTI asked for a buffer past our cap: records dropped */      \
  X(unrecorded_threads)         /* threads that got no event buffer: their calls unrecorded */

enum class Counter : int {
#define DDPSCOPE_COUNTER_ENUM(name) name,
  DDPSCOPE_COUNTERS(DDPSCOPE_COUNTER_ENUM)
#undef DDPSCOPE_COUNTER_ENUM
      count_of_counters
};

void count(Counter c, uint64_t n = 1);
uint64_t counter_value(Counter c);
const char* counter_name(Counter c);

}  // namespace ddpscope::inject
