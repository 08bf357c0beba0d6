// A modelled backend on a topology: how long each bucket's all-reduce takes
// and how much the rank's compute slows it. Either a measured backend's
// calibration (Gloo, MPI: fitted α-β on this machine, the inter-node link
// from the topology's declared bandwidth) or NCCL's own priors (GPU clusters).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "tuner/model/calibration.h"
#include "tuner/model/nccl_priors.h"
#include "tuner/model/other_bandwidth.h"
#include "tuner/topology.h"

namespace ddpscope::tuner::model {

struct RankScaling;  // core_sharing.h

class ModelBackend {
 public:
  // A calibrated CPU backend (its own algorithm, ring for Gloo and the
  // tuner's MPI). Inside a node: the fitted link. Between nodes: the link
  // fitted on an emulated multi-node topology when the calibration has one
  // (its wire share of β scaled to the declared bandwidth), else the fitted
  // per-message cost and the declared bandwidth (the fit's β where none is
  // declared); plus the declared latency.
  // `algorithm` asks "what if this backend ran another all-reduce" (the
  // calibration's own when absent).
  static ModelBackend calibrated(const Calibration& c, const Topology& t,
                                 std::optional<Algorithm> algorithm = std::nullopt);
  // NCCL's choice of algorithm and protocol per bucket, with its own costs.
  static ModelBackend nccl_priors(const Topology& t, GpuArch arch);

  const std::string& backend() const { return backend_; }  // what is modelled: gloo, mpi, nccl
  const Topology& topology() const { return topology_; }
  double bucket_ms(uint64_t bytes) const;
  double comm_rate_during_compute() const { return comm_rate_; }
  // The pace of all-reduces while the ranks compute, as a share of their
  // pace alone, with their CPUs busy `cpu_share` of their time alone
  // (cpu_share below; 1 on one node). A wire-paced all-reduce needs the
  // cores only part of the time: compute slows it only as far as the CPU it
  // needs exceeds the CPU it gets (a roofline: its CPU work at the slowed
  // rate, or the wire). MPI's rate stays: it moves nothing while the rank
  // computes, whatever the cores.
  double comm_rate_while_computing(double cpu_share) const;
  // The share of an all-reduce of `bytes` that the ranks' CPUs are busy
  // with: over a shaped link, the same ring unshaped (the calibration's
  // inter_path, with its ratios) over the ring's time; 1 inside a node, and
  // where nothing says otherwise (no unshaped path, no shaped link).
  double cpu_share(uint64_t bytes) const;
  double step_delay_ms() const { return step_delay_ms_; }
  double step_delay_under_comm_ms() const { return step_delay_comm_ms_; }
  double step_delay_step_us() const { return step_delay_step_us_; }
  const GpuCluster& cluster() const { return cluster_; }  // NCCL only
  bool is_nccl() const { return backend_ == "nccl"; }
  std::string describe() const;  // one line: what the numbers are

 private:
  std::string backend_;
  Topology topology_;
  Algorithm algorithm_ = Algorithm::ring;
  LinkCost intra_, inter_;
  // The calibration's two-rank link (Calibration::intra_pair), the floor of
  // the one-node one at any rank count: one rank's pace with cores to spare.
  std::optional<LinkCost> pair_;
  // The calibration's per-size ratios, where the link and algorithm are the
  // ones measured (empty otherwise: the fit alone).
  SizeCorrection intra_by_size_, inter_by_size_, pair_by_size_;
  double comm_rate_ = 1.0;
  double step_delay_ms_ = 0, step_delay_comm_ms_ = 0, step_delay_step_us_ = 0;
  // The ring unshaped across the nodes (inter_path), for cpu_share.
  std::optional<LinkCost> path_;
  SizeCorrection path_by_size_;
  GpuCluster cluster_;
  bool inter_fitted_ = false;  // inter_ from all-reduces across the nodes of an emulated topology
  // A ring over a fitted inter link at another bandwidth than fitted.
  std::optional<OtherBandwidth> other_bandwidth_;
  std::string source_, inter_source_;
  // calibrated()'s steps: the links (`link_scale`: the one-node link's steps
  // at these ranks, core_sharing.h), the per-size corrections that still
  // apply, and the step delays at these ranks.
  void fit_links(const Calibration& c, const Topology& t, double link_scale);
  void keep_size_corrections(const Calibration& c, const Topology& t);
  void scale_step_delays(const Calibration& c, const Topology& t, const RankScaling& ranks);
  std::string inter_description() const;
  std::string pair_description() const;
  double corrected_s(const LinkCost& link, const SizeCorrection& by_size, double bytes) const;
  double one_node_s(double bytes) const;
};

}  // namespace ddpscope::tuner::model
