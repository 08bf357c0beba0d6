#include "tuner/model/nccl_outputs.h"

#include <cctype>
#include <set>
#include <utility>

namespace ddpscope::tuner::model {
namespace {

constexpr uint64_t kPluginMaxBytes = 4294967295ull;  // the example plugin's "all sizes"

std::pair<NcclAlgo, NcclProto> choice_at(const GpuCluster& c, uint64_t bytes) {
  auto e = nccl_best_allreduce(c, double(bytes));
  return {e.algo, e.proto};
}

// The plugin spells names in lower case.
std::string lower(const char* s) {
  std::string out(s);
  for (auto& ch : out) ch = char(std::tolower(static_cast<unsigned char>(ch)));
  return out;
}

}  // namespace

std::vector<NcclSizeRange> nccl_choice_ranges(const GpuCluster& c) {
  std::vector<NcclSizeRange> ranges;
  auto current = choice_at(c, 0);
  uint64_t range_start = 0, probe = 0;
  // Walk powers of two; where the choice differs between two probes, bisect
  // for the first byte count with the new choice.
  for (uint64_t next = 1; probe < kPluginMaxBytes; next = next * 2) {
    const uint64_t hi = std::min(next, kPluginMaxBytes);
    auto at_hi = choice_at(c, hi);
    if (at_hi != current) {
      uint64_t lo = probe, up = hi;  // choice(lo) == current, choice(up) != current
      while (up - lo > 1) {
        uint64_t mid = lo + (up - lo) / 2;
        (choice_at(c, mid) == current ? lo : up) = mid;
      }
      ranges.push_back({range_start, lo, current.first, current.second});
      range_start = up;
      current = choice_at(c, up);
    }
    probe = hi;
  }
  ranges.push_back({range_start, kPluginMaxBytes, current.first, current.second});
  return ranges;
}

void write_nccl_tuner_config(std::ostream& out, const GpuCluster& c,
                             const std::vector<NcclSizeRange>& ranges) {
  out << "# NCCL example tuner plugin configuration, written by ddpscope tune --backend model\n"
      << "# cluster: " << c.nodes << " node(s) x " << c.gpus_per_node << " GPU(s), intra "
      << c.intra_gbytes_per_s << " GB/s, network " << c.net_gbytes_per_s << " GB/s per GPU\n"
      << "# collective_type,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks,"
         "numPipeOps,regBuff\n";
  for (const auto& r : ranges)
    out << "allreduce," << r.min_bytes << "," << r.max_bytes << "," << lower(nccl_algo_name(r.algo))
        << "," << lower(nccl_proto_name(r.proto)) << ",-1," << c.nodes << "," << c.nranks()
        << ",-1,-1\n";
}

std::vector<std::string> nccl_environment(const GpuCluster& c,
                                          const std::vector<uint64_t>& bucket_bytes,
                                          const std::string& tuner_config_path) {
  std::set<std::pair<NcclAlgo, NcclProto>> choices;
  for (uint64_t b : bucket_bytes) choices.insert(choice_at(c, b));
  std::vector<std::string> env;
  if (choices.size() == 1) {
    env.push_back(std::string("NCCL_ALGO=") + nccl_algo_name(choices.begin()->first));
    env.push_back(std::string("NCCL_PROTO=") + nccl_proto_name(choices.begin()->second));
  }
  if (!tuner_config_path.empty()) {
    env.push_back("NCCL_TUNER_PLUGIN=libnccl-tuner-example.so");
    env.push_back("NCCL_TUNER_CONFIG_FILE=" + tuner_config_path);
  }
  return env;
}

}  // namespace ddpscope::tuner::model
