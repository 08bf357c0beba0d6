// NCCL's own choice at a size, judged by the run itself (NCCL's profiler
// plugin, nccl_choices.h). For one algorithm and protocol, bus bandwidth
// does not fall as messages grow: a larger message amortises the same
// latency over more bytes. So where NCCL switches to another algorithm or
// protocol at a larger size and the larger messages then move markedly less
// bus bandwidth than the smaller ones did, the switch came too early for this
// machine: NCCL's tuning tables (or its tuner plugin) misjudge it here.
// The rule needs device timing (host times say nothing of GPU bandwidth) and
// enough calls on both sides of the switch (kMinCalls) for the medians to mean
// something; kDrop (25 %) keeps it well clear of run-to-run noise on a GPU
// (a few percent).
#include <algorithm>
#include <map>

#include "profiler/analysis/recommend_rules.h"

namespace ddpscope::analysis::rules {
namespace {

constexpr uint64_t kMinCalls = 5;
constexpr double kDrop = 0.75;

bool device_timed(const RunAnalysis& run) {
  return run.timing == "kernel_channels" || run.timing == "event" || run.timing == "cupti";
}

Recommendation advice(const NcclChoiceStats& small, const NcclChoiceStats& big) {
  bool proto = small.proto != big.proto;
  std::string setting = proto ? "NCCL_PROTO" : "NCCL_ALGO";
  std::string value = "^" + (proto ? big.proto : big.algo);
  return {setting, value,
          fmt("NCCL switched %s from %s/%s to %s/%s between %.2f and %.2f MiB, and the larger "
              "messages moved %.2f GB/s bus bandwidth against %.2f GB/s for the smaller (%d and "
              "%d calls): try excluding %s (%s=%s) and compare the runs with `ddpscope check`",
              std::string(name_of(big.op)).c_str(), small.algo.c_str(), small.proto.c_str(),
              big.algo.c_str(), big.proto.c_str(), mib(small.bytes), mib(big.bytes), big.busbw_gbps,
              small.busbw_gbps, int(small.calls), int(big.calls),
              (proto ? big.proto : big.algo).c_str(), setting.c_str(), value.c_str())};
}

}  // namespace

bool nccl_choice_rules(const RunAnalysis& run, std::vector<Recommendation>& out) {
  if (!device_timed(run)) return false;
  std::map<std::pair<Op, int>, std::vector<const NcclChoiceStats*>> by_op;
  for (const auto& c : run.nccl_choices)
    if (c.calls >= kMinCalls && c.busbw_gbps > 0) by_op[{c.op, c.nranks}].push_back(&c);
  size_t before = out.size();
  for (auto& [key, sizes] : by_op) {
    std::sort(sizes.begin(), sizes.end(), [](auto* a, auto* b) { return a->bytes < b->bytes; });
    for (size_t i = 0; i + 1 < sizes.size(); ++i) {
      const NcclChoiceStats &small = *sizes[i], &big = *sizes[i + 1];
      bool switched = small.algo != big.algo || small.proto != big.proto;
      if (switched && big.bytes > small.bytes && big.busbw_gbps < kDrop * small.busbw_gbps) {
        out.push_back(advice(small, big));
        break;  // one switch per op: the first one NCCL got wrong
      }
    }
  }
  return out.size() > before;
}

}  // namespace ddpscope::analysis::rules
