#include "profiler/analysis/nccl_choices.h"

#include <algorithm>
#include <climits>
#include <map>
#include <tuple>

#include "profiler/analysis/intervals.h"
#include "profiler/core/stats.h"

namespace ddpscope::analysis {
namespace {

using RankKey = std::pair<int32_t, int64_t>;  // (rank, coll_key)

// GPU time per collective: its channels' first start to last stop.
std::map<RankKey, double> kernel_spans(store::RunReader& reader) {
  std::map<RankKey, std::pair<int64_t, int64_t>> span;
  reader.for_each<NcclKernelChannelRecord>([&](const NcclKernelChannelRecord& k) {
    if (k.coll_key <= 0 || k.gpu_start <= 0 || k.gpu_stop < k.gpu_start) return;
    auto [it, fresh] = span.try_emplace({k.rank, k.coll_key}, k.gpu_start, k.gpu_stop);
    if (!fresh) {
      it->second.first = std::min(it->second.first, k.gpu_start);
      it->second.second = std::max(it->second.second, k.gpu_stop);
    }
  });
  std::map<RankKey, double> out;
  for (const auto& [key, s] : span) out[key] = double(s.second - s.first) / 1e3;
  return out;
}

// Network time per collective: the union over its proxy steps of the time
// from being posted to the network to the step's stop (docs/nccl_plugin.md).
std::map<RankKey, double> network_times(store::RunReader& reader) {
  std::map<RankKey, std::vector<Interval>> waits;
  reader.for_each<NcclProxyStepRecord>([&](const NcclProxyStepRecord& s) {
    if (s.coll_key <= 0 || s.net_wait_ns == kNoTime || s.end_ns == kNoTime) return;
    waits[{s.rank, s.coll_key}].push_back({s.net_wait_ns, s.end_ns});
  });
  std::map<RankKey, double> out;
  for (auto& [key, w] : waits) out[key] = double(total_length(union_of(std::move(w)))) / 1e3;
  return out;
}

double median_known(std::vector<double> v) {
  v.erase(std::remove_if(v.begin(), v.end(), [](double x) { return x < 0; }), v.end());
  return v.empty() ? -1 : stats::quantile(v, 0.5);
}

}  // namespace

NcclChoices nccl_choices(store::RunReader& reader) {
  NcclChoices out;
  auto plugin = reader.rows<NcclPluginCollectiveRecord>();
  if (plugin.empty()) return out;
  auto kernel = kernel_spans(reader);
  auto network = network_times(reader);
  for (const auto& p : plugin) {
    if (p.collective_id <= 0) continue;  // not joined (a rank file, or an older run)
    NcclChoice c{p.algo, p.proto, p.nchannels};
    RankKey key{p.rank, p.coll_key};
    if (auto k = kernel.find(key); k != kernel.end()) c.kernel_us = k->second;
    if (auto n = network.find(key); n != network.end()) c.network_us = n->second;
    out.emplace(p.collective_id, std::move(c));
  }
  return out;
}

std::string choice_label(const NcclChoice& c) {
  return c.algo + "/" + c.proto + " x" + std::to_string(c.nchannels);
}

std::vector<NcclChoiceStats> nccl_choice_stats(const std::vector<Call>& calls,
                                               const NcclChoices& choices) {
  if (choices.empty()) return {};
  struct Samples {
    std::vector<double> dur_us, kernel_us, network_us;
  };
  using Key = std::tuple<Op, uint64_t, int, std::string, std::string, int>;
  std::map<Key, Samples> groups;
  for (const auto& call : calls) {
    auto it = choices.find(call.id);
    if (it == choices.end()) continue;
    const NcclChoice& c = it->second;
    Samples& s = groups[{call.op, call.bytes, call.nranks, c.algo, c.proto, c.nchannels}];
    s.dur_us.push_back(double(call.end - call.start) / 1e3);
    s.kernel_us.push_back(c.kernel_us);
    s.network_us.push_back(c.network_us);
  }
  std::vector<NcclChoiceStats> out;
  for (auto& [key, s] : groups) {
    NcclChoiceStats n;
    std::tie(n.op, n.bytes, n.nranks, n.algo, n.proto, n.nchannels) = key;
    n.calls = s.dur_us.size();
    n.median_us = stats::quantile(s.dur_us, 0.5);
    if (n.median_us > 0 && n.bytes > 0)
      n.busbw_gbps = double(n.bytes) / (n.median_us * 1e3) * busbw_factor(n.op, n.nranks);
    n.kernel_us = median_known(s.kernel_us);
    n.network_us = median_known(s.network_us);
    out.push_back(std::move(n));
  }
  return out;
}

}  // namespace ddpscope::analysis
