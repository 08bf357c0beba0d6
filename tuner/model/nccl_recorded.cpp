#include "tuner/model/nccl_recorded.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <tuple>

#include "profiler/store/reader.h"

namespace ddpscope::tuner::model {
namespace {

std::string upper(std::string s) {
  for (auto& ch : s) ch = char(std::toupper(static_cast<unsigned char>(ch)));
  return s;
}

// NCCL's names for the pairs the model knows; other algorithms (NVLS,
// CollNet, PAT) are not modelled.
bool parse_choice(const std::string& algo, const std::string& proto, NcclAlgo& a, NcclProto& p) {
  if (algo == "RING")
    a = NcclAlgo::ring;
  else if (algo == "TREE")
    a = NcclAlgo::tree;
  else
    return false;
  if (proto == "LL")
    p = NcclProto::ll;
  else if (proto == "LL128")
    p = NcclProto::ll128;
  else if (proto == "SIMPLE")
    p = NcclProto::simple;
  else
    return false;
  return true;
}

using Size = std::pair<uint64_t, int>;               // (bytes, nranks)
using Choice = std::pair<std::string, std::string>;  // (algo, proto)

// Per all-reduce size, how often NCCL made each choice.
std::map<Size, std::map<Choice, uint64_t>> recorded_choices(const std::string& path) {
  store::RunReader reader(path);
  std::map<int64_t, Size> sizes;
  reader.for_each_collective([&](const CollectiveRecord& c) {
    if (c.op == Op::allreduce) sizes[c.id] = {c.bytes, c.nranks};
  });
  std::map<Size, std::map<Choice, uint64_t>> out;
  for (const auto& p : reader.rows<NcclPluginCollectiveRecord>()) {
    auto it = sizes.find(p.collective_id);
    if (it != sizes.end()) ++out[it->second][{p.algo, p.proto}];
  }
  return out;
}

}  // namespace

std::vector<NcclChoiceCheck> compare_nccl_choices(const std::string& run_path,
                                                  const GpuCluster& cluster) {
  std::vector<NcclChoiceCheck> out;
  for (const auto& [size, votes] : recorded_choices(run_path)) {
    auto most = std::max_element(votes.begin(), votes.end(),
                                 [](auto& a, auto& b) { return a.second < b.second; });
    NcclChoiceCheck c;
    std::tie(c.bytes, c.nranks) = size;
    for (const auto& [choice, n] : votes) c.calls += n;
    std::tie(c.recorded_algo, c.recorded_proto) = most->first;
    NcclEstimate best = nccl_best_allreduce(cluster, double(c.bytes));
    c.model_algo = upper(nccl_algo_name(best.algo));
    c.model_proto = upper(nccl_proto_name(best.proto));
    c.model_us = best.time_us;
    c.agree = c.model_algo == c.recorded_algo && c.model_proto == c.recorded_proto;
    NcclAlgo a;
    NcclProto p;
    if (parse_choice(c.recorded_algo, c.recorded_proto, a, p)) {
      NcclEstimate e = nccl_allreduce_estimate(cluster, a, p, double(c.bytes));
      if (e.available) c.recorded_model_us = e.time_us;
    }
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace ddpscope::tuner::model
