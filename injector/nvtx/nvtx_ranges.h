// NVTX ranges as ddpscope records them: each closed range becomes one
// RangeEvent in the closing thread's ring.
//
// Push/pop: a fixed-depth stack per thread in TLS (capture.h: DDPSCOPE_TLS).
// NVTX keeps one push/pop stack per domain per thread; we keep one per thread
// and pop the innermost open range of the domain asked for, which is the same
// thing.
// Start/end: ids we hand out, each naming a slot of a fixed lock-free table,
// so a range may end on another thread (it is recorded with the tid that
// started it).
//
// Names arrive as interned ids; callers intern only while capturing() (a
// forked child must never take the name table's mutex, which a thread of its
// parent may have held at the fork).
#pragma once

#include <cstdint>

namespace ddpscope::inject::nvtx {

// NVTX's return values: the 0-based level of the range pushed or popped within
// its domain; pop returns -1 when that domain has no open range on this thread.
int push_range(uint32_t domain, uint32_t name);
int pop_range(uint32_t domain);

// 0 when not recording (NVTX ignores the id then; so does end_range).
uint64_t start_range(uint32_t domain, uint32_t name);
void end_range(uint64_t id);

}  // namespace ddpscope::inject::nvtx
