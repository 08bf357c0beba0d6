#include "tuner/model/model_backend.h"

#include <algorithm>
#include <cstdio>

#include "tuner/model/core_sharing.h"

namespace ddpscope::tuner::model {
namespace {

// Seconds per byte of a link sold as `gbps` gigabits per second.
double seconds_per_byte(double gbps) { return 8.0 / (gbps * 1e9); }

double gbytes_per_s(double seconds_per_byte) {
  return seconds_per_byte > 0 ? 1e-9 / seconds_per_byte : 0.0;
}

// A declared intra bandwidth can only slow a measured link down; a declared
// latency adds to its steps.
LinkCost with_declared(LinkCost link, const Link& declared) {
  if (declared.bandwidth_gbps > 0)
    link.beta_s_per_byte =
        std::max(link.beta_s_per_byte, seconds_per_byte(declared.bandwidth_gbps));
  link.alpha_s += declared.latency_us * 1e-6;
  return link;
}

// The slower of two links, cost by cost.
LinkCost slower(LinkCost a, const LinkCost& b) {
  a.alpha_s = std::max(a.alpha_s, b.alpha_s);
  a.beta_s_per_byte = std::max(a.beta_s_per_byte, b.beta_s_per_byte);
  a.gamma_s_per_byte = std::max(a.gamma_s_per_byte, b.gamma_s_per_byte);
  return a;
}

// A fit on a shaped link says nothing of an unshaped one (the machine's own).
bool inter_fit_applies(const Calibration& c, const Topology& t) {
  return c.inter && t.nodes > 1 && (t.inter.bandwidth_gbps > 0 || c.inter->bandwidth_gbps == 0);
}

// Between nodes: the link fitted on an emulated topology when the calibration
// has one (at another bandwidth, `other`'s β), else the machine's own link
// with the declared bandwidth. `cpu`: the scaling of the steps' CPU costs
// to these ranks (core_sharing.h).
LinkCost inter_link(const Calibration& c, const Topology& t, double cpu,
                    const std::optional<OtherBandwidth>& other) {
  LinkCost inter = scaled(c.intra.cost, cpu);  // the same software stack sends each message
  const bool shaped = t.inter.bandwidth_gbps > 0;
  if (inter_fit_applies(c, t)) {
    inter = c.inter->fit.cost;
    inter.alpha_s *= cpu;  // the steps' scheduling; the bytes are the wire's
    if (other) inter.beta_s_per_byte = other->beta_s_per_byte();
  } else if (shaped) {
    inter.beta_s_per_byte = seconds_per_byte(t.inter.bandwidth_gbps);
  }
  inter.alpha_s += t.inter.latency_us * 1e-6;
  return inter;
}

}  // namespace

ModelBackend ModelBackend::calibrated(const Calibration& c, const Topology& t,
                                      std::optional<Algorithm> algorithm) {
  ModelBackend m;
  m.backend_ = c.backend;
  m.topology_ = t;
  m.algorithm_ = algorithm.value_or(c.algorithm);
  // Another rank count than calibrated: the same cores, shared by more or
  // fewer ranks (core_sharing.h). The one-node link's steps are the cores'
  // work; over a shaped link only the steps' scheduling is, not the wire.
  const int from = calibrated_ranks(c);
  const bool other_ranks = from > 0 && c.cores > 0 && from != t.nranks();
  // The cores as the calibration's ranks had them (other work took some).
  const double cores = effective_cores(from, c.cores, c.step_delay_ms, c.step_delay_step_us);
  const auto ranks = scale_ranks(from, t.nranks(), cores);
  m.fit_links(c, t, ranks.link);
  m.keep_size_corrections(c, t);
  m.comm_rate_ = c.comm_rate_during_compute;
  // Derived from the cores for any backend but MPI (which moves nothing
  // while the rank computes, whatever the cores): derived again for these ranks.
  if (other_ranks && c.backend != "mpi") m.comm_rate_ = comm_rate_from_cores(t.nranks(), cores);
  m.scale_step_delays(c, t, ranks);
  m.source_ = "calibrated on " + (c.host.empty() ? std::string("this machine") : c.host);
  return m;
}

void ModelBackend::fit_links(const Calibration& c, const Topology& t, double link_scale) {
  intra_ = with_declared(scaled(c.intra.cost, link_scale), t.intra);
  // Fewer ranks share the cores less, but their ring steps go no faster than
  // two ranks' with cores to spare, measured: the one-node link is the
  // slower of the two (one_node_s).
  if (c.intra_pair) pair_ = with_declared(c.intra_pair->cost, t.intra);
  inter_fitted_ = inter_fit_applies(c, t);
  if (inter_fitted_ && t.inter.bandwidth_gbps > 0 && c.inter->bandwidth_gbps > 0 &&
      t.inter.bandwidth_gbps != c.inter->bandwidth_gbps)
    other_bandwidth_ = other_bandwidth(c, t.inter.bandwidth_gbps, link_scale,
                                       algorithm_ == c.algorithm && t.inter.latency_us == 0);
  inter_ = inter_link(c, t, link_scale, other_bandwidth_);
  const auto path = unshaped_path(c, link_scale);
  if (inter_fitted_ && path && t.inter.bandwidth_gbps > 0 && algorithm_ == Algorithm::ring) {
    path_ = path;
    if (algorithm_ == c.algorithm) path_by_size_ = c.inter_path->fit.by_size;
  }
  inter_source_ = inter_fitted_                ? "fitted on " + c.inter->topology
                  : t.inter.bandwidth_gbps > 0 ? std::string("the declared bandwidth")
                                               : std::string("not limited: the machine's own");
}

// The residual shape belongs to the link and algorithm measured: a declared
// bandwidth or latency, or another algorithm, gets the fit alone.
void ModelBackend::keep_size_corrections(const Calibration& c, const Topology& t) {
  if (algorithm_ != c.algorithm) return;
  if (t.intra.bandwidth_gbps == 0 && t.intra.latency_us == 0) {
    intra_by_size_ = c.intra.by_size;
    if (c.intra_pair) pair_by_size_ = c.intra_pair->by_size;
  }
  if (inter_fitted_ && t.inter.bandwidth_gbps == c.inter->bandwidth_gbps && t.inter.latency_us == 0)
    inter_by_size_ = c.inter->fit.by_size;
}

void ModelBackend::scale_step_delays(const Calibration& c, const Topology& t,
                                     const RankScaling& ranks) {
  step_delay_ms_ = c.step_delay_ms * ranks.step_delay;
  step_delay_comm_ms_ = c.step_delay_under_comm_ms * ranks.step_delay_under_comm;
  step_delay_step_us_ = c.step_delay_step_us;
  // Two ranks: their own probe's delays where it was measured, not scaled
  // (the calibrated ranks' oversubscribed probe reads as fewer cores than
  // two ranks have to themselves).
  if (c.pair_step_delays && t.nranks() == 2) {
    step_delay_ms_ = c.pair_step_delays->alone_ms;
    step_delay_comm_ms_ = c.pair_step_delays->under_comm_ms;
  }
}

ModelBackend ModelBackend::nccl_priors(const Topology& t, GpuArch arch) {
  ModelBackend m;
  m.backend_ = "nccl";
  m.topology_ = t;
  m.cluster_ = gpu_cluster_for(t, arch);
  m.comm_rate_ = 1.0;  // NCCL's kernels run on their own SMs beside the compute
  m.source_ = "NCCL 2.20.3's own tuning tables";
  return m;
}

// One link class alone (the whole ring on it), times its ratio at this size.
double ModelBackend::corrected_s(const LinkCost& link, const SizeCorrection& by_size,
                                 double bytes) const {
  const int p = topology_.nranks();
  return allreduce_s(algorithm_, p, bytes, link) * by_size.at(bytes_per_step(algorithm_, p, bytes));
}

double ModelBackend::bucket_ms(uint64_t bytes) const {
  if (is_nccl()) return nccl_best_allreduce(cluster_, double(bytes)).time_us / 1000;
  // A fitted inter link was measured as this very ring over the nodes, its
  // steps inside the nodes included: it is the step cost, not one of two
  // links whose slower sets it (that would count the one-node fit's noise).
  if (inter_fitted_ && algorithm_ == Algorithm::ring)
    return (other_bandwidth_ ? other_bandwidth_->ring_s(topology_.nranks(), double(bytes))
                             : corrected_s(inter_, inter_by_size_, double(bytes))) *
           1000;
  if (topology_.nodes <= 1) return one_node_s(double(bytes)) * 1000;
  const LinkCost intra = pair_ ? slower(intra_, *pair_) : intra_;
  return allreduce_on_topology_s(algorithm_, topology_, double(bytes), intra, inter_) * 1000;
}

// The cores' throughput shared by these ranks, or one rank's pace with cores
// to spare, whichever is slower at this size (each with its measured ratios).
double ModelBackend::one_node_s(double bytes) const {
  const double shared = corrected_s(intra_, intra_by_size_, bytes);
  return pair_ ? std::max(shared, corrected_s(*pair_, pair_by_size_, bytes)) : shared;
}

double ModelBackend::cpu_share(uint64_t bytes) const {
  if (!path_) return 1;
  const double all = bucket_ms(bytes);
  if (!(all > 0)) return 1;
  return std::clamp(corrected_s(*path_, path_by_size_, double(bytes)) * 1000 / all, 0.0, 1.0);
}

double ModelBackend::comm_rate_while_computing(double cpu_share) const {
  if (backend_ == "mpi" || cpu_share >= 1) return comm_rate_;
  return cpu_share > 0 ? std::min(1.0, comm_rate_ / cpu_share) : 1.0;
}

std::string ModelBackend::inter_description() const {
  if (topology_.nodes <= 1) return "";
  char part[160];
  snprintf(part, sizeof part, "; between nodes alpha %.1f us, beta %.3f GB/s (%s)",
           inter_.alpha_s * 1e6, gbytes_per_s(inter_.beta_s_per_byte), inter_source_.c_str());
  return part;
}

std::string ModelBackend::pair_description() const {
  if (!pair_) return "";
  char part[120];
  snprintf(part, sizeof part, " (at least 2 ranks' alpha %.1f us, beta %.3f GB/s)",
           pair_->alpha_s * 1e6, gbytes_per_s(pair_->beta_s_per_byte));
  return part;
}

std::string ModelBackend::describe() const {
  char line[600];
  if (is_nccl()) {
    snprintf(
        line, sizeof line,
        "model of nccl on %s (%s): %d channels, intra %.1f GB/s (%s), network %.1f GB/s per GPU",
        topology_.name().c_str(), source_.c_str(), cluster_.channels, cluster_.intra_gbytes_per_s,
        cluster_.intra == IntraHw::nvlink ? "NVLink" : "PCIe", cluster_.net_gbytes_per_s);
  } else {
    snprintf(
        line, sizeof line,
        "model of %s (%s all-reduce) on %s, %s: alpha %.1f us, beta %.3f GB/s, "
        "gamma %.3f GB/s%s%s; comm rate during compute %.2f, step delay %.2f ms (+%.2f under comm)",
        backend_.c_str(), algorithm_name(algorithm_), topology_.name().c_str(), source_.c_str(),
        intra_.alpha_s * 1e6, gbytes_per_s(intra_.beta_s_per_byte),
        gbytes_per_s(intra_.gamma_s_per_byte), pair_description().c_str(),
        inter_description().c_str(), comm_rate_, step_delay_ms_, step_delay_comm_ms_);
  }
  return line;
}

}  // namespace ddpscope::tuner::model
