#include "injector/runtime/kernel_linker.h"

#include <algorithm>

namespace ddpscope::inject {

void KernelLinker::add_collective(const CollectiveRecord& c, uint32_t correlation) {
  pending_[correlation].group.collectives.push_back(c);
}

void KernelLinker::add_activities(ActivityBatch& batch) {
  for (const auto& l : batch.links) links_[l.correlation] = {l.external, 0};
  for (auto& k : batch.kernels) kernels_.push_back({std::move(k), 0});
  batch.kernels.clear();
  batch.links.clear();
}

// A kernel goes to the collective its link names. Without a link: compute
// kernels are free at once (most kernels are, and were never in an NCCL call);
// NCCL kernels wait a while for their link, then go unlinked.
void KernelLinker::attach(bool final, std::vector<KernelRecord>& unlinked) {
  std::vector<Waiting> still;
  for (auto& w : kernels_) {
    auto link = links_.find(uint32_t(w.kernel.correlation));
    auto owner = link == links_.end() ? pending_.end() : pending_.find(link->second.external);
    if (owner != pending_.end()) {
      if (owner->second.since_activity < 0) owner->second.since_activity = 0;
      // Launched inside an NCCL call, so communication whatever its name: a
      // one-rank communicator runs NCCL's oneRankReduce, not an ncclDevKernel.
      if (w.kernel.kind == KernelKind::compute) w.kernel.kind = KernelKind::comm;
      owner->second.group.kernels.push_back(std::move(w.kernel));
    } else if (!final && w.kernel.kind == KernelKind::comm && ++w.age <= kMaxWaitFlushes) {
      still.push_back(std::move(w));
    } else {
      unlinked.push_back(std::move(w.kernel));
    }
  }
  kernels_.swap(still);
}

void KernelLinker::span(LinkedGroup& g) {
  if (g.kernels.empty()) return;
  int64_t start = g.kernels.front().start_ns, end = g.kernels.front().end_ns;
  for (const auto& k : g.kernels) {
    start = std::min(start, k.start_ns);
    end = std::max(end, k.end_ns);
  }
  for (auto& c : g.collectives) {
    c.start_ns = start;
    c.end_ns = end;
    c.timing = Timing::cupti;
  }
}

void KernelLinker::take(bool final, std::vector<LinkedGroup>& done,
                        std::vector<KernelRecord>& unlinked) {
  attach(final, unlinked);
  for (auto it = pending_.begin(); it != pending_.end();) {
    Pending& p = it->second;
    ++p.age;
    bool complete = p.since_activity >= 1 || (p.since_activity == 0 && final);
    bool given_up = final || (p.since_activity < 0 && p.age > kMaxWaitFlushes);
    if (p.since_activity >= 0) ++p.since_activity;
    if (!complete && !given_up) {
      ++it;
      continue;
    }
    span(p.group);
    done.push_back(std::move(p.group));
    it = pending_.erase(it);
  }
  // Links outlive their collective by a little: a late copy may still name it.
  for (auto it = links_.begin(); it != links_.end();)
    it = ++it->second.age > 2 * kMaxWaitFlushes ? links_.erase(it) : std::next(it);
  // Keep done groups in launch order, as the collectives table is.
  std::sort(done.begin(), done.end(), [](const LinkedGroup& a, const LinkedGroup& b) {
    return a.collectives.front().host_start_ns < b.collectives.front().host_start_ns;
  });
}

}  // namespace ddpscope::inject
