// What the model tells an NCCL user to set: environment variables that pin
// the algorithm and protocol it predicts fastest for the recommended buckets,
// and a configuration file for NCCL's example tuner plugin (ext-tuner/example,
// NCCL 2.27: `collective_type,min_bytes,max_bytes,algorithm,protocol,channels,
// nNodes,nRanks,numPipeOps,regBuff`, one size range per line).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "tuner/model/nccl_priors.h"

namespace ddpscope::tuner::model {

// A size range (inclusive) over which the predicted choice is one pair.
struct NcclSizeRange {
  uint64_t min_bytes = 0, max_bytes = 0;
  NcclAlgo algo = NcclAlgo::ring;
  NcclProto proto = NcclProto::simple;
};

// The choice over 0 .. 4294967295 bytes (the plugin's whole range), split
// where it changes (crossovers found to the byte by bisection).
std::vector<NcclSizeRange> nccl_choice_ranges(const GpuCluster& c);

// The plugin's CSV: a comment header naming the cluster, then one all-reduce
// line per range, channels/numPipeOps/regBuff left to NCCL (-1), matching
// only this cluster's nNodes and nRanks.
void write_nccl_tuner_config(std::ostream& out, const GpuCluster& c,
                             const std::vector<NcclSizeRange>& ranges);

// NAME=value lines. NCCL_ALGO and NCCL_PROTO only when one pair is predicted
// fastest for every bucket size given (otherwise a global setting would slow
// some buckets down: use the plugin file). With a plugin file, the variables
// that load it.
std::vector<std::string> nccl_environment(const GpuCluster& c,
                                          const std::vector<uint64_t>& bucket_bytes,
                                          const std::string& tuner_config_path);

}  // namespace ddpscope::tuner::model
