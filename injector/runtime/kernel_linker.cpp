#include "injector/runtime/kernel_linker.h"

#include <algorithm>

#include "injector/runtime/counters.h"

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

// No other rank waits on it, and NCCL may enqueue no GPU work for it at all
// (a one-rank communicator's in-place reduction, a collective of no
// elements), so no record may ever come: it cannot be where a job hangs, and
// goes host-timed after the bounded wait, or at the end.
bool KernelLinker::runs_alone(const LinkedGroup& g) {
  return std::all_of(g.collectives.begin(), g.collectives.end(), [](const CollectiveRecord& c) {
    return c.nranks <= 1 || (c.count == 0 && !op_is(c.op, kPointToPoint));
  });
}

KernelLinker::PendingMap::iterator KernelLinker::finish(PendingMap::iterator it,
                                                        std::vector<LinkedGroup>& done) {
  span(it->second.group);
  done.push_back(std::move(it->second.group));
  return pending_.erase(it);
}

// Known complete by their activities: these arrived a flush ago, or at the
// last flush (nothing more will come). Each is a point of its streams' order.
void KernelLinker::take_timed(bool final, StreamOrder& order, std::vector<LinkedGroup>& done) {
  for (auto it = pending_.begin(); it != pending_.end();) {
    Pending& p = it->second;
    ++p.age;
    bool complete = p.since_activity >= 1 || (p.since_activity == 0 && final);
    if (p.since_activity >= 0) ++p.since_activity;
    if (!complete) {
      ++it;
      continue;
    }
    for (const auto& c : p.group.collectives) order.completed(c, it->first);
    it = finish(it, done);
  }
}

// Without activities: known complete when a collective launched after it on
// each of its streams completed (host-timed and counted, its GPU time being
// unknown). Checked against this flush's completions only, which a later
// flush renews while the job runs: the pending one's own records, had they
// come with the later one's, attached first.
void KernelLinker::take_untimed(bool final, const StreamOrder& order,
                                std::vector<LinkedGroup>& done) {
  for (auto it = pending_.begin(); it != pending_.end();) {
    Pending& p = it->second;
    auto followed = [&](const CollectiveRecord& c) { return order.followed(c, it->first); };
    const auto& cs = p.group.collectives;
    bool untimed = p.since_activity < 0;
    bool by_order = untimed && !order.empty() && std::all_of(cs.begin(), cs.end(), followed);
    bool alone = untimed && runs_alone(p.group) && (final || p.age > kMaxWaitFlushes);
    if (by_order) count(Counter::stream_ordered_collectives, cs.size());
    it = by_order || alone ? finish(it, done) : std::next(it);
  }
}

// The oldest launches leave first: a CUPTI that delivers nothing at all must
// not grow this without bound. Their completion is assumed, and counted.
void KernelLinker::keep_under_cap(std::vector<LinkedGroup>& done) {
  if (pending_.size() <= kMaxPendingLaunches) return;
  std::vector<std::pair<int64_t, uint64_t>> by_launch;  // (call start, correlation)
  by_launch.reserve(pending_.size());
  for (const auto& [id, p] : pending_)
    by_launch.emplace_back(p.group.collectives.front().host_start_ns, id);
  size_t excess = pending_.size() - kMaxPendingLaunches;
  std::nth_element(by_launch.begin(), by_launch.begin() + excess, by_launch.end());
  for (size_t i = 0; i < excess; ++i) {
    auto it = pending_.find(by_launch[i].second);
    count(Counter::unconfirmed_collectives, it->second.group.collectives.size());
    finish(it, done);
  }
}

// A link outlives its collective by a little (a late copy may still name it),
// and lives as long as the collective is pending: after a hang of minutes, its
// kernel's record still finds it.
void KernelLinker::age_links() {
  for (auto it = links_.begin(); it != links_.end();) {
    bool expired = ++it->second.age > 2 * kMaxWaitFlushes && !pending_.count(it->second.external);
    it = expired ? links_.erase(it) : std::next(it);
  }
}

void KernelLinker::take(bool final, std::vector<LinkedGroup>& done,
                        std::vector<KernelRecord>& unlinked) {
  attach(final, unlinked);
  StreamOrder order;
  take_timed(final, order, done);
  take_untimed(final, order, done);
  keep_under_cap(done);
  age_links();
  // Keep done groups in launch order, as the collectives table is.
  std::sort(done.begin(), done.end(), [](const LinkedGroup& a, const LinkedGroup& b) {
    return a.collectives.front().host_start_ns < b.collectives.front().host_start_ns;
  });
}

}  // namespace ddpscope::inject
