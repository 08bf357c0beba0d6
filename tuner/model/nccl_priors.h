// What NCCL itself believes an all-reduce costs on a GPU cluster: its
// per-algorithm/protocol latencies, bandwidth factors and caps (the tables of
// src/graph/tuning.cc, NCCL 2.20.3; NVLink per-link bandwidths from
// src/graph/topo.h), and its choice — the algorithm and protocol with the
// least predicted time. These are the priors for clusters no test machine
// has; docs/model.md lists every number with its source.
#pragma once

#include <string>

#include "tuner/topology.h"

namespace ddpscope::tuner::model {

enum class NcclAlgo { tree, ring };
enum class NcclProto { ll, ll128, simple };
enum class GpuArch { volta, ampere, hopper };  // NCCL's compute-capability classes
enum class IntraHw { nvlink, pci };

const char* nccl_algo_name(NcclAlgo a);    // "Tree", "Ring" (NCCL_ALGO's spelling)
const char* nccl_proto_name(NcclProto p);  // "LL", "LL128", "Simple"

struct GpuCluster {
  int nodes = 1;
  int gpus_per_node = 8;
  GpuArch arch = GpuArch::hopper;
  IntraHw intra = IntraHw::nvlink;
  double intra_gbytes_per_s = 0;  // per GPU: all of its NVLinks (or its PCIe link)
  double net_gbytes_per_s = 0;    // per GPU, to other nodes
  double net_latency_us = 0;      // the network's own latency, added per inter-node hop
  int channels = 0;               // NCCL channels (rings/trees in parallel)
  bool amd_cpu = false;           // NCCL picks LL caps and network overhead by CPU vendor
  int nranks() const { return nodes * gpus_per_node; }
};

// A cluster for a topology: declared bandwidths (Gbit/s / 8 = GB/s), or where
// a topology leaves one at 0, the architecture's NVLink (per-link bandwidth ×
// links per GPU) and NCCL's default network (12 GB/s, 100 Gbit/s). An intra
// link of 100 GB/s or more is NVLink, below it PCIe. Channels: the intra
// bandwidth over one link's (NVLink) or PCIe's 12 GB/s, at least 2.
GpuCluster gpu_cluster_for(const Topology& t, GpuArch arch = GpuArch::hopper);

struct NcclEstimate {
  NcclAlgo algo = NcclAlgo::ring;
  NcclProto proto = NcclProto::simple;
  bool available = false;         // NCCL would not use this pair here (e.g. LL128 over PCIe)
  double latency_us = 0;          // NCCL's latency term
  double algbw_gbytes_per_s = 0;  // NCCL's algorithm bandwidth (after size corrections)
  double time_us = 0;             // latency + bytes / algbw
};

NcclEstimate nccl_allreduce_estimate(const GpuCluster& c, NcclAlgo a, NcclProto p, double bytes);

// NCCL's choice for one all-reduce: the available pair with the least time.
NcclEstimate nccl_best_allreduce(const GpuCluster& c, double bytes);

}  // namespace ddpscope::tuner::model
