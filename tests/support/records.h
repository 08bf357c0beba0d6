// Hand-made records for the tests that write rank files through the store's
// own writer: one all-reduce of a 2-rank communicator, 100 ns long, that a
// test adjusts where its case needs.
#pragma once

#include "profiler/core/records.h"

namespace ddpscope::testing {

inline CollectiveRecord allreduce_at(int rank, uint64_t seq, int64_t start_ns) {
  CollectiveRecord c;
  c.id = int64_t(seq + 1);
  c.rank = rank;
  c.comm_id = 77;
  c.comm_rank = rank;
  c.nranks = 2;
  c.seq = seq;
  c.dtype = Dtype::float32;
  c.count = 1000;
  c.bytes = 4000;
  c.host_start_ns = c.start_ns = start_ns;
  c.host_end_ns = c.end_ns = start_ns + 100;
  c.timing = Timing::host;
  return c;
}

}  // namespace ddpscope::testing
