// Launch order on CUDA streams, as far as the host can be sure of it. Work on
// one stream runs in launch order, and NCCL makes the caller's stream wait for
// a collective's work: once a collective completed, every collective launched
// before it on the same stream has completed too, whether or not CUPTI ever
// delivers that one's records (a lost buffer). The writer thread fills one of
// these per flush with the collectives whose records arrived, then asks it
// about those still waiting.
#pragma once

#include <cstdint>
#include <map>
#include <tuple>

#include "profiler/core/records.h"

namespace ddpscope::inject {

class StreamOrder {
 public:
  // `c` completed (its GPU activities arrived); `correlation` is the external
  // id its launch carried: later launches of one thread carry larger ones.
  void completed(const CollectiveRecord& c, uint64_t correlation);
  // Whether a collective launched after `c` on c's stream has completed.
  bool followed(const CollectiveRecord& c, uint64_t correlation) const;
  bool empty() const { return streams_.empty(); }

 private:
  // A stream handle names one stream process-wide, except the special handles
  // (the legacy and per-thread default streams), which name one per device or
  // per thread: those are told apart by communicator (one device) and thread.
  using StreamKey = std::tuple<uint64_t, uint64_t, uint32_t>;
  static StreamKey key_of(const CollectiveRecord& c);

  struct Completed {
    int64_t latest_call_start = INT64_MIN;       // of any thread's completed call
    std::map<uint32_t, uint64_t> latest_by_tid;  // thread -> largest correlation
  };
  std::map<StreamKey, Completed> streams_;
};

}  // namespace ddpscope::inject
