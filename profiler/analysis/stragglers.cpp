#include "profiler/analysis/stragglers.h"

#include <algorithm>
#include <set>
#include <span>
#include <unordered_map>

#include "profiler/core/stats.h"

namespace ddpscope::analysis {
namespace {

using Key = LatenessByCollective::Key;

// The calls of each collective, grouped in key order: `calls` holds each
// group's calls in a run, in the order they came (a rank's order), and
// `first` where each run starts. Flat, not a map of vectors: a million calls.
struct Groups {
  std::vector<const Call*> calls;
  std::vector<size_t> first;  // one past the last group too
  size_t size() const { return first.empty() ? 0 : first.size() - 1; }
  std::span<const Call* const> operator[](size_t g) const {
    return {calls.data() + first[g], first[g + 1] - first[g]};
  }
};

struct KeyHash {
  size_t operator()(const Key& k) const { return std::hash<uint64_t>()(k.first * 31 + k.second); }
};

Groups grouped(const std::vector<Call>& calls) {
  std::unordered_map<Key, uint32_t, KeyHash> id;  // key -> group, in the order first seen
  std::vector<Key> keys;
  std::vector<uint32_t> group_of(calls.size(), UINT32_MAX);
  std::vector<size_t> count;
  for (size_t i = 0; i < calls.size(); ++i) {
    if (calls[i].nranks <= 1) continue;
    auto [it, added] = id.try_emplace({calls[i].comm_id, calls[i].seq}, uint32_t(keys.size()));
    if (added) keys.push_back(it->first), count.push_back(0);
    group_of[i] = it->second;
    ++count[it->second];
  }
  std::vector<uint32_t> order(keys.size());  // groups in key order
  for (uint32_t g = 0; g < order.size(); ++g) order[g] = g;
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return keys[a] < keys[b]; });
  Groups out;
  std::vector<size_t> at(keys.size());
  out.first.push_back(0);
  for (uint32_t g : order) at[g] = out.first.back(), out.first.push_back(at[g] + count[g]);
  out.calls.resize(out.first.back());
  for (size_t i = 0; i < calls.size(); ++i)
    if (group_of[i] != UINT32_MAX) out.calls[at[group_of[i]]++] = &calls[i];
  return out;
}

// Collectives issued by every rank of their communicator that the analysis
// sees: all of its `nranks` in a whole run; in a part of one (`report
// --ranks`), or a run missing a rank's file, the members present. A
// collective some present member lacks (cut by a time window, an event
// dropped) is left out: its first arrival may be missing.
Groups complete_groups(const std::vector<Call>& calls) {
  Groups all = grouped(calls);
  std::map<uint64_t, std::set<int>> members;  // comm -> ranks seen on it
  const Call* last = nullptr;                 // a rank's calls come together: one insert per run
  for (const auto& c : calls)
    if (c.nranks > 1 && !(last && last->comm_id == c.comm_id && last->rank == c.rank)) {
      members[c.comm_id].insert(c.rank);
      last = &c;
    }
  Groups out;
  out.first.push_back(0);
  for (size_t g = 0; g < all.size(); ++g) {
    auto calls_of = all[g];
    size_t expected = std::min(members[calls_of[0]->comm_id].size(), size_t(calls_of[0]->nranks));
    if (calls_of.size() != expected || expected <= 1) continue;
    out.calls.insert(out.calls.end(), calls_of.begin(), calls_of.end());
    out.first.push_back(out.calls.size());
  }
  return out;
}

std::vector<std::vector<const Call*>> synchronising_groups(const Groups& groups) {
  std::vector<std::vector<const Call*>> out;
  for (size_t g = 0; g < groups.size(); ++g)
    if (op_is(groups[g][0]->op, kSynchronising))
      out.emplace_back(groups[g].begin(), groups[g].end());
  return out;
}

}  // namespace

Lateness measure_lateness(const std::vector<Call>& calls,
                          const std::map<int, std::string>& host_of) {
  Lateness out;
  auto groups = complete_groups(calls);
  out.clocks = fit_clocks(synchronising_groups(groups), host_of);
  std::map<int, HostCorrection> correction;  // by rank
  for (const auto& [rank, h] : host_of) correction[rank] = out.clocks.of(h);
  const HostCorrection unnamed = out.clocks.of("");  // a rank without a host name
  for (const auto& [rank, h] : host_of) {
    auto it = out.clocks.hosts.find(h);
    int64_t t0 = it == out.clocks.hosts.end() ? 0 : it->second.t0;
    out.correction_us[rank] = out.clocks.correction_ns(h, t0) / 1e3;
  }
  auto& by = out.by_collective;
  by.first.push_back(0);
  std::vector<std::pair<int, double>> entered;  // (rank, when), one collective's
  for (size_t index = 0; index < groups.size(); ++index) {
    auto g = groups[index];
    double first = 0, last = 0;
    int last_rank = -1;
    entered.clear();
    for (const Call* c : g) {
      auto k = correction.find(c->rank);
      double t =
          double(c->host_start) - (k == correction.end() ? unnamed : k->second).at(c->host_start);
      entered.push_back({c->rank, t});
    }
    first = entered.front().second;
    for (auto& [r, t] : entered) first = std::min(first, t);
    for (auto& [r, t] : entered) {
      double late = (t - first) / 1e6;
      out.late_ms[r].push_back(late);
      by.entries.push_back({r, late});
      if (last_rank < 0 || t > last) last = t, last_rank = r;
    }
    // By rank, for find()'s binary search (a scan of a collective's ranks,
    // per rank and iteration, was quadratic in the ranks); stable, so a rank
    // twice in one collective keeps its entries in order.
    std::stable_sort(by.entries.begin() + ptrdiff_t(by.first.back()), by.entries.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    by.keys.push_back({g[0]->comm_id, g[0]->seq});
    by.first.push_back(by.entries.size());
    ++out.last_count[last_rank];
    ++out.matched;
  }
  return out;
}

std::optional<double> LatenessByCollective::find(Key key, int rank) const {
  auto it = std::lower_bound(keys.begin(), keys.end(), key);
  if (it == keys.end() || *it != key) return std::nullopt;
  size_t g = size_t(it - keys.begin());
  // A rank twice in one collective: its last entry.
  auto end = std::upper_bound(entries.begin() + ptrdiff_t(first[g]),
                              entries.begin() + ptrdiff_t(first[g + 1]), rank,
                              [](int r, const auto& e) { return r < e.first; });
  if (end == entries.begin() + ptrdiff_t(first[g]) || std::prev(end)->first != rank)
    return std::nullopt;
  return std::prev(end)->second;
}

}  // namespace ddpscope::analysis
