// NCCL's all-reduce cost model, re-derived from its published constants
// (NCCL 2.20.3, src/graph/tuning.cc and src/graph/topo.h). Only ring and tree
// are modelled: CollNet needs SHARP switches, NVLS needs NVSwitch multicast,
// and neither can be inferred from a topology's link bandwidths.
#include "tuner/model/nccl_priors.h"

#include <algorithm>
#include <cmath>

namespace ddpscope::tuner::model {
namespace {

constexpr int kTree = 0, kRing = 1;  // NCCL's table order
constexpr int kLL = 0, kLL128 = 1, kSimple = 2;
constexpr int kNvlink = 0, kPci = 1, kNet = 2;

// Base latency (µs) per algorithm and protocol.
constexpr double kBaseLatUs[2][3] = {{6.8, 14.0, 0}, {6.6, 14.0, 8.4}};
// Latency (µs) per hop, by hardware: NVLink, PCI, network.
constexpr double kHwLatUs[3][2][3] = {
    {{.6, 1.25, 28}, {.6, 1.9, 3.4}},
    {{1.0, 1.9, 28}, {1.0, 2.5, 5.7}},
    {{5.0, 8.5, 28}, {2.7, 4.0, 14.0}},
};
// LL bandwidth caps (GB/s): [GPU class on one node, CPU vendor off it][1, 2, >2 nodes].
constexpr double kLLMaxBw[3][3] = {{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {87.7, 22.5, 19.0}};
// Per-channel caps (GB/s) [arch][1, 2, >2 nodes].
constexpr double kRingLL128PerCh[3][3] = {{20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 36.7}};
constexpr double kTreeLL128PerCh[3][3] = {{20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 29.0}};
constexpr double kTreePerCh[3][3] = {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}};
// Tree bandwidth correction by size, [protocol][log2(bytes / 64)], 64 B .. 256 MB.
constexpr double kTreeCorrection[3][23] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7,  .7,  .7,  .6, .5,
     .4,  .4,  .5,  .6,  .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7,  .6, .6,
     .6,  .6,  .6,  .6,  .8,  .9, .9, .9, .9, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9},
};
// NVLink bandwidth (GB/s) of one link, and links per GPU (V100, A100, H100 SXM).
constexpr double kNvlinkPerLink[3] = {20.0, 20.0, 20.6};
constexpr int kNvlinksPerGpu[3] = {6, 12, 18};
// NCCL never runs more channels than MAXCHANNELS (64).
constexpr double kMaxChannels = 64;
constexpr double kPciBw = 12.0;  // PCIe Gen3 x16, NCCL's PCI_BW
constexpr double kNetBw = 12.0;  // NCCL's NET_BW, 100 Gbit/s

int log2_floor(double x) {
  int l = 0;
  for (auto n = static_cast<unsigned long long>(x); n > 1; n >>= 1) ++l;
  return l;
}

int node_index(int nodes) { return nodes <= 2 ? nodes - 1 : 2; }

// NCCL's bus bandwidth for the pair, before conversion to algorithm bandwidth.
double bus_bw(const GpuCluster& c, int a, int p) {
  const int arch = int(c.arch), n2 = node_index(c.nodes);
  const int ll_row = c.nodes == 1 ? arch : (c.amd_cpu ? 1 : 0);
  const double ll_max = kLLMaxBw[ll_row][n2];
  const double ppn = c.gpus_per_node;
  const double ch = c.channels;
  double bw =
      c.nodes == 1 ? c.intra_gbytes_per_s : std::min(c.intra_gbytes_per_s, c.net_gbytes_per_s);
  if (a == kRing && p == kLL) bw = std::min(ll_max, bw / 4);
  if (a == kRing && p == kLL128)
    bw = std::min(bw * (ppn < 2 ? 0.7 : 0.92), ch * kRingLL128PerCh[arch][n2]);
  if (a == kTree) bw = std::min(bw * .92, ch * kTreePerCh[arch][n2]);
  if (a == kTree && p == kLL) bw = std::min(bw / 3.8, ll_max);
  if (a == kTree && p == kLL128)
    bw = std::min(bw * (c.nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0), ch * kTreeLL128PerCh[arch][n2]);
  return bw;
}

double latency_us(const GpuCluster& c, int a, int p) {
  const int n = c.nranks(), intra_hw = c.intra == IntraHw::nvlink ? kNvlink : kPci;
  double intra = kHwLatUs[intra_hw][a][p];
  double inter = kHwLatUs[kNet][a][p] + c.net_latency_us;
  if (p == kSimple) inter += c.net_latency_us;  // the flush of received data
  if (a == kTree)
    return kBaseLatUs[a][p] + 2 * ((c.gpus_per_node - 1) * intra + log2_floor(c.nodes) * inter);
  const int steps = 2 * (n - 1), inter_steps = c.nodes > 1 ? 2 * c.nodes : 0;
  if (c.nodes > 1) {  // every ring step posts a network operation
    const double overhead = (c.amd_cpu ? 2.0 : 1.0) * (p == kSimple ? 3 : 1);
    intra = std::max(intra, overhead);
  }
  return kBaseLatUs[a][p] + (steps - inter_steps) * intra + inter_steps * inter;
}

}  // namespace

const char* nccl_algo_name(NcclAlgo a) { return a == NcclAlgo::tree ? "Tree" : "Ring"; }

const char* nccl_proto_name(NcclProto p) {
  return p == NcclProto::ll ? "LL" : p == NcclProto::ll128 ? "LL128" : "Simple";
}

GpuCluster gpu_cluster_for(const Topology& t, GpuArch arch) {
  GpuCluster c;
  c.nodes = t.nodes;
  c.gpus_per_node = t.ranks_per_node;
  c.arch = arch;
  c.intra_gbytes_per_s = t.intra.bandwidth_gbps > 0
                             ? t.intra.bandwidth_gbps / 8
                             : kNvlinkPerLink[int(arch)] * kNvlinksPerGpu[int(arch)];
  c.intra = c.intra_gbytes_per_s >= 100 ? IntraHw::nvlink : IntraHw::pci;
  c.net_gbytes_per_s = t.inter.bandwidth_gbps > 0 ? t.inter.bandwidth_gbps / 8 : kNetBw;
  c.net_latency_us = t.inter.latency_us;
  const double per_channel = c.intra == IntraHw::nvlink ? kNvlinkPerLink[int(arch)] : kPciBw;
  // Clamped before the conversion: a declared bandwidth of any size must not
  // overflow an int (found by fuzz_topology: intra=6.7e46 Gbit/s).
  c.channels =
      int(std::clamp(std::ceil(c.intra_gbytes_per_s / per_channel - 1e-9), 2.0, kMaxChannels));
  return c;
}

NcclEstimate nccl_allreduce_estimate(const GpuCluster& c, NcclAlgo algo, NcclProto proto,
                                     double bytes) {
  NcclEstimate e;
  e.algo = algo;
  e.proto = proto;
  const int a = algo == NcclAlgo::tree ? kTree : kRing, p = int(proto);
  const int n = c.nranks();
  // LL128 only where NCCL enables it by default: NVLink inside the node.
  e.available = n > 1 && !(p == kLL128 && c.intra != IntraHw::nvlink);
  if (!e.available) return e;
  double bw = bus_bw(c, a, p) * (a == kRing ? double(n) / (2.0 * (n - 1)) : 0.5);
  double lat = latency_us(c, a, p);
  const int log_size = log2_floor(bytes / 64);
  if (a == kTree && log_size < 23) bw *= kTreeCorrection[p][log_size];
  // "Plateau effect of ring": simple rings across nodes pay more latency per step.
  if (a == kRing && p == kSimple && c.nodes > 1 && bytes / (c.channels * n) >= 64)
    lat *= c.arch == GpuArch::volta ? 1.9 : 1.4;
  e.latency_us = lat;
  e.algbw_gbytes_per_s = bw;
  e.time_us = lat + bytes / (1000 * bw);
  return e;
}

NcclEstimate nccl_best_allreduce(const GpuCluster& c, double bytes) {
  NcclEstimate best;
  for (NcclAlgo a : {NcclAlgo::tree, NcclAlgo::ring})
    for (NcclProto p : {NcclProto::ll, NcclProto::ll128, NcclProto::simple}) {
      auto e = nccl_allreduce_estimate(c, a, p, bytes);
      if (e.available && e.algbw_gbytes_per_s > 0 && (!best.available || e.time_us < best.time_us))
        best = e;
    }
  return best;
}

}  // namespace ddpscope::tuner::model
