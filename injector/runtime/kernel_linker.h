// Ties GPU activities to the collectives that launched them, on the writer
// thread. A collective carries our correlation id (pushed to CUPTI around its
// NCCL call, or around the ncclGroupEnd that launched its group); CUPTI links
// its own correlation ids to ours; each kernel carries CUPTI's. Records come in
// any order and over several flushes, so the linker holds each side until the
// other arrives, within bounds.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "injector/runtime/device_tracer.h"
#include "profiler/core/records.h"

namespace ddpscope::inject {

// Collectives launched together (one NCCL call, or one group) with the GPU
// work they ran as. Their start/end are the span of that work (timing cupti),
// or stay host-timed when none arrived in time.
struct LinkedGroup {
  std::vector<CollectiveRecord> collectives;
  std::vector<KernelRecord> kernels;
};

class KernelLinker {
 public:
  // How many flushes a collective waits for its first activity (then it is
  // written host-timed), and a kernel or link for the other side.
  static constexpr int kMaxWaitFlushes = 25;

  void add_collective(const CollectiveRecord& c, uint32_t correlation);
  void add_activities(ActivityBatch& batch);
  // Once per flush, after the adds: collectives complete since the previous
  // flush (their activities arrived a flush ago: later copies of a multi-part
  // collective land in between), and kernels that belong to no collective.
  // `final`: everything goes.
  void take(bool final, std::vector<LinkedGroup>& done, std::vector<KernelRecord>& unlinked);

  size_t pending() const { return pending_.size(); }
  // Each collective still waiting for its GPU work (enqueued, not known done).
  template <typename Fn>
  void for_each_pending(Fn&& fn) const {
    for (const auto& [_, p] : pending_)
      for (const auto& c : p.group.collectives) fn(c);
  }

 private:
  struct Pending {
    LinkedGroup group;
    int age = 0;              // flushes since the collective arrived
    int since_activity = -1;  // flushes since its first activity, -1: none yet
  };
  struct Link {
    uint64_t external;
    int age;
  };
  struct Waiting {
    KernelRecord kernel;
    int age;
  };
  void attach(bool final, std::vector<KernelRecord>& unlinked);
  static void span(LinkedGroup& g);

  std::unordered_map<uint64_t, Pending> pending_;  // by our correlation
  std::unordered_map<uint32_t, Link> links_;       // CUPTI correlation -> ours
  std::vector<Waiting> kernels_;                   // not yet attached
};

}  // namespace ddpscope::inject
