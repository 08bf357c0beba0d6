// Ties GPU activities to the collectives that launched them, on the writer
// thread. A collective carries our correlation id (pushed to CUPTI around its
// NCCL call, or around the ncclGroupEnd that launched its group); CUPTI links
// its own correlation ids to ours; each kernel carries CUPTI's. Records come in
// any order and over several flushes, so the linker holds each side until the
// other arrives.
//
// A collective stays in flight until its completion is known, never until a
// timeout: a real NCCL hang lasts minutes, and one given up after a few
// seconds would read as completed (docs/hangs.md). It is known complete when
// its activities arrive (timed by them: cupti), or when a collective launched
// after it on its stream completed (stream order: host-timed, its GPU time
// unknown). What is still unresolved at the end stays in flight.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "injector/runtime/device_tracer.h"
#include "injector/runtime/stream_order.h"
#include "profiler/core/records.h"

namespace ddpscope::inject {

// Collectives launched together (one NCCL call, or one group) with the GPU
// work they ran as. Their start/end are the span of that work (timing cupti),
// or stay host-timed when their completion was known otherwise.
struct LinkedGroup {
  std::vector<CollectiveRecord> collectives;
  std::vector<KernelRecord> kernels;
};

class KernelLinker {
 public:
  // How many flushes an NCCL kernel waits for its link (then it is written
  // with no collective), and a collective no other rank waits on for its
  // first activity (NCCL may run it as nothing at all: see runs_alone).
  static constexpr int kMaxWaitFlushes = 25;
  // Launches (calls or groups) held in flight at most. Stream order resolves
  // collectives whose records were lost as soon as a later one completes, so
  // only a CUPTI that delivers nothing at all reaches this; the oldest then
  // leave, host-timed and counted (meta count:unconfirmed_collectives).
  static constexpr size_t kMaxPendingLaunches = 4096;

  void add_collective(const CollectiveRecord& c, uint32_t correlation);
  void add_activities(ActivityBatch& batch);
  // Once per flush, after the adds: collectives whose completion became known
  // since the previous flush (their activities arrived a flush ago: later
  // copies of a multi-part collective land in between), and kernels that
  // belong to no collective. `final`: the last flush; collectives whose
  // completion is still unknown stay pending (in flight), all else goes.
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
  using PendingMap = std::unordered_map<uint64_t, Pending>;  // by our correlation

  void attach(bool final, std::vector<KernelRecord>& unlinked);
  void take_timed(bool final, StreamOrder& order, std::vector<LinkedGroup>& done);
  void take_untimed(bool final, const StreamOrder& order, std::vector<LinkedGroup>& done);
  void keep_under_cap(std::vector<LinkedGroup>& done);
  void age_links();
  PendingMap::iterator finish(PendingMap::iterator it, std::vector<LinkedGroup>& done);
  static bool runs_alone(const LinkedGroup& g);
  static void span(LinkedGroup& g);

  PendingMap pending_;
  std::unordered_map<uint32_t, Link> links_;  // CUPTI correlation -> ours
  std::vector<Waiting> kernels_;              // not yet attached
};

}  // namespace ddpscope::inject
