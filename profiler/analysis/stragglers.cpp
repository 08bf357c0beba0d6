#include "profiler/analysis/stragglers.h"

#include <algorithm>

#include "profiler/core/stats.h"

namespace ddpscope::analysis {
namespace {

using Key = std::pair<uint64_t, uint64_t>;

bool synchronising(Op op) {
  return op == Op::allreduce || op == Op::allgather || op == Op::reduce_scatter ||
         op == Op::alltoall || op == Op::barrier;
}

// Collectives complete on every rank of their communicator, by key.
std::map<Key, std::vector<const Call*>> complete_groups(const std::vector<Call>& calls) {
  std::map<Key, std::vector<const Call*>> groups;
  for (const auto& c : calls)
    if (c.nranks > 1) groups[{c.comm_id, c.seq}].push_back(&c);
  for (auto it = groups.begin(); it != groups.end();)
    it = int(it->second.size()) == it->second.front()->nranks ? std::next(it) : groups.erase(it);
  return groups;
}

// Per host, the median over its ranks and synchronising collectives of how
// much later its clock says they ended than the median of all ranks' ends.
std::map<int, double> clock_corrections(const std::map<Key, std::vector<const Call*>>& groups,
                                        const std::map<int, std::string>& host_of) {
  std::map<std::string, std::vector<double>> skew;
  for (const auto& [key, g] : groups) {
    if (!synchronising(g.front()->op)) continue;
    std::vector<double> ends;
    for (const Call* c : g) ends.push_back(double(c->end));
    double mid = stats::median(ends);
    for (const Call* c : g)
      skew[host_of.count(c->rank) ? host_of.at(c->rank) : ""].push_back(double(c->end) - mid);
  }
  std::map<std::string, double> per_host;
  for (auto& [h, v] : skew) per_host[h] = stats::median(v);
  // Only differences between hosts are clock skew; ranks sharing a host share a clock.
  std::string ref = host_of.count(0) ? host_of.at(0) : "";
  double base = per_host.count(ref) ? per_host[ref] : 0;
  std::map<int, double> out;
  for (const auto& [rank, host] : host_of) {
    bool same_host = host == ref;
    out[rank] = same_host || !per_host.count(host) ? 0 : per_host[host] - base;
  }
  return out;
}

}  // namespace

Lateness measure_lateness(const std::vector<Call>& calls,
                          const std::map<int, std::string>& host_of) {
  Lateness out;
  auto groups = complete_groups(calls);
  auto correction = clock_corrections(groups, host_of);
  for (const auto& [rank, ns] : correction) out.correction_us[rank] = ns / 1e3;
  for (const auto& [key, g] : groups) {
    double first = 0, last = 0;
    int last_rank = -1;
    std::vector<std::pair<int, double>> entered;
    for (const Call* c : g) {
      double t = double(c->host_start) - (correction.count(c->rank) ? correction[c->rank] : 0);
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
