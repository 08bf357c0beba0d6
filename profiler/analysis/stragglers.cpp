#include "profiler/analysis/stragglers.h"

#include <algorithm>
#include <set>

#include "profiler/core/stats.h"

namespace ddpscope::analysis {
namespace {

using Key = std::pair<uint64_t, uint64_t>;

// Collectives issued by every rank of their communicator that the analysis
// sees, by key: all of its `nranks` in a whole run; in a part of one
// (`report --ranks`), or a run missing a rank's file, the members present.
// A collective some present member lacks (cut by a time window, an event
// dropped) is left out: its first arrival may be missing.
std::map<Key, std::vector<const Call*>> complete_groups(const std::vector<Call>& calls) {
  std::map<Key, std::vector<const Call*>> groups;
  std::map<uint64_t, std::set<int>> members;  // comm -> ranks seen on it
  for (const auto& c : calls)
    if (c.nranks > 1) {
      groups[{c.comm_id, c.seq}].push_back(&c);
      members[c.comm_id].insert(c.rank);
    }
  for (auto it = groups.begin(); it != groups.end();) {
    size_t expected = std::min(members[it->first.first].size(), size_t(it->second.front()->nranks));
    it = it->second.size() == expected && expected > 1 ? std::next(it) : groups.erase(it);
  }
  return groups;
}

std::vector<std::vector<const Call*>> synchronising_groups(
    const std::map<Key, std::vector<const Call*>>& groups) {
  std::vector<std::vector<const Call*>> out;
  for (const auto& [key, g] : groups)
    if (op_is(g.front()->op, kSynchronising)) out.push_back(g);
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
  for (const auto& [key, g] : groups) {
    double first = 0, last = 0;
    int last_rank = -1;
    std::vector<std::pair<int, double>> entered;
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
      out.by_collective[key][r] = late;
      if (last_rank < 0 || t > last) last = t, last_rank = r;
    }
    ++out.last_count[last_rank];
    ++out.matched;
  }
  return out;
}

}  // namespace ddpscope::analysis
