// classify_rank and split_by_backward (ddp_account.h): who issued each
// collective, from DDP's own account.
#include <algorithm>
#include <set>
#include <unordered_map>

#include "profiler/analysis/ddp_account.h"

namespace ddpscope::analysis {
namespace {

// A process group tied to the communicator the native hooks saw it use.
struct GroupTie {
  uint64_t comm_id = 0;
  int64_t offset = 0;  // group seq = native seq + offset
};

// Whether a region that issued `want` collectives could have issued these
// (one communicator's native seqs of the calls that started inside it).
bool issued_by(std::vector<uint64_t>& seqs, int64_t want) {
  std::sort(seqs.begin(), seqs.end());
  return int64_t(seqs.size()) == want && int64_t(seqs.back() - seqs.front()) + 1 == want;
}

// DDP's constructor runs its collectives (parameter shape check, state
// broadcast) synchronously, so they execute inside its region: the one
// communicator with exactly that many consecutive calls in that time is the
// group's, and the first of them is the region's seq_begin.
std::map<int64_t, GroupTie> tie_groups(const std::vector<Call>& calls,
                                       const std::vector<DdpRegionRecord>& regions) {
  std::map<int64_t, GroupTie> out;
  for (const auto& r : regions) {
    if (r.kind != DdpRegionKind::init || r.seq_begin < 0 || r.seq_end <= r.seq_begin ||
        out.count(r.pg_key))
      continue;
    const int64_t want = r.seq_end - r.seq_begin;
    std::map<uint64_t, std::vector<uint64_t>> inside;
    for (const auto& c : calls)
      if (c.host_start >= r.start_ns && c.host_start <= r.end_ns)
        inside[c.comm_id].push_back(c.seq);
    for (auto& [comm, seqs] : inside) {
      if (issued_by(seqs, want)) {
        out[r.pg_key] = {comm, r.seq_begin - int64_t(seqs.front())};
        break;
      }
    }
  }
  return out;
}

// A group DDP's constructor did not tie (no DDP on it, or no DDP at all) is
// tied by the regions of the user's calls on it: each call's native
// collective starts on the host inside its region (async_op or not), so the
// communicator with exactly the region's count of consecutive calls in it
// is a candidate, and the (communicator, offset) most regions agree on wins.
void tie_by_user_calls(const std::vector<Call>& calls, const std::vector<DdpRegionRecord>& regions,
                       std::map<int64_t, GroupTie>& out) {
  std::vector<const DdpRegionRecord*> mine;
  for (const auto& r : regions)
    if (r.kind == DdpRegionKind::user && r.seq_begin >= 0 && r.seq_end > r.seq_begin &&
        !out.count(r.pg_key))
      mine.push_back(&r);
  if (mine.empty()) return;
  std::vector<std::pair<int64_t, size_t>> by_start;  // (host start, index in calls)
  by_start.reserve(calls.size());
  for (size_t i = 0; i < calls.size(); ++i)
    if (!is_fsdp(calls[i].role)) by_start.push_back({calls[i].host_start, i});
  std::sort(by_start.begin(), by_start.end());
  std::map<int64_t, std::map<std::pair<uint64_t, int64_t>, int>> votes;
  for (const DdpRegionRecord* r : mine) {
    const int64_t want = r->seq_end - r->seq_begin;
    std::map<uint64_t, std::vector<uint64_t>> inside;
    auto it = std::lower_bound(by_start.begin(), by_start.end(),
                               std::pair<int64_t, size_t>{r->start_ns, 0});
    for (; it != by_start.end() && it->first <= r->end_ns; ++it)
      inside[calls[it->second].comm_id].push_back(calls[it->second].seq);
    for (auto& [comm, seqs] : inside)
      if (issued_by(seqs, want)) ++votes[r->pg_key][{comm, r->seq_begin - int64_t(seqs.front())}];
  }
  for (const auto& [pg_key, tally] : votes) {
    auto best = std::max_element(tally.begin(), tally.end(),
                                 [](auto& a, auto& b) { return a.second < b.second; });
    out[pg_key] = {best->first.first, best->first.second};
  }
}

// Group seq -> the innermost region that issued it, for one process group.
// Outer regions are painted first, inner ones over them.
std::unordered_map<int64_t, size_t> paint(const std::vector<DdpRegionRecord>& regions,
                                          int64_t pg_key) {
  constexpr int64_t kLongest = 1 << 20;  // a region's range; anything longer is not ours
  std::vector<size_t> order;
  for (size_t i = 0; i < regions.size(); ++i) {
    const auto& r = regions[i];
    if (r.pg_key == pg_key && r.seq_begin >= 0 && r.seq_end > r.seq_begin &&
        r.seq_end - r.seq_begin <= kLongest)
      order.push_back(i);
  }
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const auto &x = regions[a], &y = regions[b];
    if (x.seq_begin != y.seq_begin) return x.seq_begin < y.seq_begin;
    if (x.seq_end != y.seq_end) return x.seq_end > y.seq_end;
    return x.start_ns < y.start_ns;
  });
  std::unordered_map<int64_t, size_t> at;
  for (size_t i : order)
    for (int64_t s = regions[i].seq_begin; s < regions[i].seq_end; ++s) at[s] = i;
  return at;
}

// One instance's backward pass in progress, as the walk sees it.
struct Pass {
  bool open = false;
  bool rebuilt = false;  // DDP has rebuilt its buckets (a forward said so)
  uint32_t group = 0;
  size_t next = 0;  // the bucket expected next
  int64_t opened_at = -1;
  // The rebuilt layout as seen on the wire, when DDP did not report it (its
  // logging data has it only from the sync forward after the rebuild).
  std::vector<uint64_t> learned;
  bool learned_complete = false;  // one whole pass seen
};

class Walk {
 public:
  Walk(std::vector<Call>& calls, const std::vector<DdpRegionRecord>& regions, RankAccount& acc)
      : calls_(calls), regions_(regions), acc_(acc) {}

  void group(int64_t pg_key, const GroupTie& tie);

 private:
  uint64_t expected(int instance, const Pass& p, size_t k) const;
  size_t layout_size(int instance, const Pass& p) const;
  void open_passes(int64_t upto, const std::vector<size_t>& forwards, size_t& next_forward);
  void from_region(Call& c, const DdpRegionRecord& r, size_t region);
  void from_reducer(Call& c, int64_t pg_key);
  bool take_bucket(Call& c, int instance, Pass& p, bool learn);
  uint32_t new_group(int instance, bool warmup, bool shadow);

  std::vector<Call>& calls_;
  const std::vector<DdpRegionRecord>& regions_;
  RankAccount& acc_;
  std::map<int, Pass> passes_;
  std::map<size_t, std::pair<uint32_t, size_t>> shadows_;  // region -> (group, next bucket)
  uint32_t groups_ = 0;
};

uint32_t Walk::new_group(int instance, bool warmup, bool shadow) {
  acc_.groups[++groups_] = {instance, warmup, shadow};
  return groups_;
}

// The bytes DDP's bucket k puts on the wire: its layout (rebuilt once DDP
// rebuilt), halved by the built-in fp16/bf16 compression hooks.
uint64_t Walk::expected(int instance, const Pass& p, size_t k) const {
  const DdpFacts& f = acc_.instances.at(instance);
  const auto& layout =
      p.rebuilt ? (f.rebuilt_buckets.empty() ? p.learned : f.rebuilt_buckets) : f.initial_buckets;
  if (k >= layout.size()) return 0;
  bool fp16 = f.summary.comm_hook.find("FP16") != std::string::npos ||
              f.summary.comm_hook.find("BF16") != std::string::npos;
  return fp16 ? layout[k] / 2 : layout[k];
}

size_t Walk::layout_size(int instance, const Pass& p) const {
  const DdpFacts& f = acc_.instances.at(instance);
  if (!p.rebuilt) return f.initial_buckets.size();
  if (!f.rebuilt_buckets.empty()) return f.rebuilt_buckets.size();
  return p.learned_complete ? p.learned.size() : SIZE_MAX;  // SIZE_MAX: still learning
}

// A training forward (autograd on, not inside no_sync()) opens a backward
// pass: the reducer's all-reduces follow it. DDP rebuilds its buckets in the
// first forward with autograd on after a synchronised backward, which may be
// a no_sync() micro-batch: any forward may say so.
void Walk::open_passes(int64_t upto, const std::vector<size_t>& forwards, size_t& next) {
  const uint32_t training = kRegionSync | kRegionGradEnabled;
  for (; next < forwards.size() && regions_[forwards[next]].seq_end <= upto; ++next) {
    const auto& f = regions_[forwards[next]];
    if (!acc_.instances.count(f.instance)) continue;
    Pass& p = passes_[f.instance];
    if (f.flags & kRegionRebuilt) p.rebuilt = true;
    if ((f.flags & training) != training) continue;
    if (p.rebuilt && !p.learned.empty()) p.learned_complete = true;
    bool rebuilds_later = !p.rebuilt;  // settled once the walk is over (see group())
    p.open = true;
    p.next = 0;
    p.opened_at = f.seq_end;
    p.group = new_group(f.instance, rebuilds_later, false);
  }
}

bool Walk::take_bucket(Call& c, int instance, Pass& p, bool learn) {
  const size_t n = layout_size(instance, p);
  const bool learning = n == SIZE_MAX;
  if (learning != learn) return false;
  if (!learning && (p.next >= n || c.bytes != expected(instance, p, p.next))) return false;
  if (learning) p.learned.push_back(c.bytes);
  c.role = CollectiveRole::ddp_bucket;
  c.instance = instance;
  c.bucket = int32_t(p.next++);
  c.group = p.group;
  if (!learning && p.next == n) p.open = false;
  return true;
}

void Walk::from_region(Call& c, const DdpRegionRecord& r, size_t region) {
  c.instance = r.instance;
  c.shadow = (r.flags & kRegionShadow) != 0 || r.kind == DdpRegionKind::join_shadow;
  switch (r.kind) {
    case DdpRegionKind::user:
      c.role = CollectiveRole::user;
      return;
    case DdpRegionKind::comm_hook: {
      c.role = CollectiveRole::ddp_bucket;
      c.bucket = r.bucket;
      if (!c.shadow) {
        c.group = passes_.count(r.instance) ? passes_[r.instance].group : 0;
        return;
      }
      // A shadow step's comm hooks belong to the shadow region around them.
      for (auto& [idx, g] : shadows_)
        if (regions_[idx].seq_begin <= r.seq_begin && r.seq_end <= regions_[idx].seq_end)
          c.group = g.first;
      return;
    }
    case DdpRegionKind::join_shadow: {
      // Shadow all-reduces of the buckets (DDP's default hook), zeros in
      // DDP's bucket order, between join flags and the used-parameter map.
      auto [it, fresh] = shadows_.try_emplace(region, 0, 0);
      if (fresh) it->second.first = new_group(r.instance, false, true);
      Pass& p = passes_[r.instance];
      if (acc_.instances.count(r.instance) && it->second.second < layout_size(r.instance, p) &&
          c.bytes == expected(r.instance, p, it->second.second)) {
        c.role = CollectiveRole::ddp_bucket;
        c.bucket = int32_t(it->second.second++);
        c.group = it->second.first;
        return;
      }
      c.role = CollectiveRole::ddp_control;
      return;
    }
    default:
      c.role = CollectiveRole::ddp_control;
  }
}

// Not issued from any region: the reducer's, in backward. The latest open
// pass whose next bucket has this size takes it; else the used-parameter map
// (one int32 per parameter, all-reduced once the buckets are) of the latest
// instance that looks for unused parameters.
void Walk::from_reducer(Call& c, int64_t pg_key) {
  std::vector<std::pair<int64_t, int>> open, any;
  for (auto& [instance, p] : passes_) {
    if (acc_.instances.at(instance).pg_key != pg_key || p.opened_at < 0) continue;
    any.push_back({p.opened_at, instance});
    if (p.open) open.push_back({p.opened_at, instance});
  }
  std::sort(open.rbegin(), open.rend());
  std::sort(any.rbegin(), any.rend());
  for (auto [at, instance] : open)
    if (take_bucket(c, instance, passes_[instance], false)) return;
  for (auto [at, instance] : any) {
    const auto& s = acc_.instances.at(instance).summary;
    if ((s.find_unused_parameters || s.static_graph) && c.bytes == 4 * uint64_t(s.parameters)) {
      c.role = CollectiveRole::ddp_control;
      c.instance = instance;
      return;
    }
  }
  for (auto [at, instance] : open)
    if (take_bucket(c, instance, passes_[instance], true)) return;
}

void Walk::group(int64_t pg_key, const GroupTie& tie) {
  std::vector<size_t> mine;  // this group's calls, in group seq order
  for (size_t i = 0; i < calls_.size(); ++i)
    if (calls_[i].comm_id == tie.comm_id && !is_fsdp(calls_[i].role)) mine.push_back(i);
  std::sort(mine.begin(), mine.end(),
            [&](size_t a, size_t b) { return calls_[a].seq < calls_[b].seq; });
  std::vector<size_t> forwards;
  for (size_t i = 0; i < regions_.size(); ++i) {
    const auto& r = regions_[i];
    if (r.pg_key == pg_key && r.kind == DdpRegionKind::forward && r.seq_end >= 0)
      forwards.push_back(i);
  }
  std::stable_sort(forwards.begin(), forwards.end(),
                   [&](size_t a, size_t b) { return regions_[a].seq_end < regions_[b].seq_end; });
  auto painted = paint(regions_, pg_key);
  size_t next_forward = 0;
  for (size_t i : mine) {
    Call& c = calls_[i];
    const int64_t s = int64_t(c.seq) + tie.offset;
    open_passes(s, forwards, next_forward);
    auto hit = painted.find(s);
    if (hit != painted.end())
      from_region(c, regions_[hit->second], hit->second);
    else
      from_reducer(c, pg_key);
  }
  // Warm-up: the passes before DDP rebuilt, for instances that did rebuild.
  for (auto& [id, g] : acc_.groups)
    if (g.warmup && !(passes_.count(g.instance) && passes_[g.instance].rebuilt)) g.warmup = false;
}

// The instance whose backward passes are the rank's iterations: the one
// reduced least often, then the one with the most bucket bytes. One model:
// that model. A GAN: the generator (its discriminator is reduced in both of
// the iteration's steps).
int primary_instance(const std::vector<Call>& calls, const RankAccount& acc) {
  std::map<int, std::set<uint32_t>> passes;
  std::map<int, uint64_t> bytes;
  for (const auto& c : calls) {
    if (c.role != CollectiveRole::ddp_bucket || c.instance < 0) continue;
    auto g = acc.groups.find(c.group);
    if (g != acc.groups.end() && g->second.shadow) continue;
    passes[c.instance].insert(c.group);
    bytes[c.instance] += c.bytes;
  }
  int best = -1;
  for (const auto& [instance, p] : passes) {
    if (best < 0 || p.size() < passes[best].size() ||
        (p.size() == passes[best].size() && bytes[instance] > bytes[best]))
      best = instance;
  }
  return best;
}

}  // namespace

RankAccount classify_rank(std::vector<Call>& calls, const std::vector<DdpRegionRecord>& regions,
                          const std::vector<DdpInfoRecord>& info) {
  RankAccount acc;
  acc.instances = ddp_facts(info);
  // Without DDP, the hook's regions still name the user's own calls.
  if (acc.instances.empty() && regions.empty()) return acc;
  auto ties = tie_groups(calls, regions);
  tie_by_user_calls(calls, regions, ties);
  Walk walk(calls, regions, acc);
  for (const auto& [pg_key, tie] : ties) walk.group(pg_key, tie);
  for (auto& [instance, f] : acc.instances) {
    if (!ties.count(f.pg_key)) continue;
    f.summary.buckets_from = "ddp";
    acc.classified.push_back(instance);
  }
  acc.primary = primary_instance(calls, acc);
  return acc;
}

IterationSplit split_by_backward(const std::vector<Call>& calls, const RankAccount& account) {
  IterationSplit out;
  for (size_t i = 0; i < calls.size();) {
    size_t j = i;
    while (j < calls.size() && calls[j].group == calls[i].group) ++j;
    Iteration it{i, j - i, false, false};
    auto g = account.groups.find(calls[i].group);
    if (g != account.groups.end()) it.warmup = g->second.warmup, it.shadow = g->second.shadow;
    out.iterations.push_back(it);
    i = j;
  }
  for (auto it = out.iterations.rbegin(); it != out.iterations.rend(); ++it)
    if (!it->warmup && !it->shadow) {
      for (size_t k = 0; k < it->count; ++k) out.pattern.push_back(calls[it->first + k].bytes);
      break;
    }
  return out;
}

}  // namespace ddpscope::analysis
