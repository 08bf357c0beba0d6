#include "tuner/model/model_backend.h"

#include <algorithm>
#include <cstdio>

namespace ddpscope::tuner::model {
namespace {

// Seconds per byte of a link sold as `gbps` gigabits per second.
double seconds_per_byte(double gbps) { return 8.0 / (gbps * 1e9); }

}  // namespace

ModelBackend ModelBackend::calibrated(const Calibration& c, const Topology& t,
                                      std::optional<Algorithm> algorithm) {
  ModelBackend m;
  m.backend_ = c.backend;
  m.topology_ = t;
  m.algorithm_ = algorithm.value_or(c.algorithm);
  m.intra_ = c.intra.cost;
  // A declared intra bandwidth can only slow the measured link down.
  if (t.intra.bandwidth_gbps > 0)
    m.intra_.beta_s_per_byte =
        std::max(m.intra_.beta_s_per_byte, seconds_per_byte(t.intra.bandwidth_gbps));
  m.intra_.alpha_s += t.intra.latency_us * 1e-6;
  m.inter_ = c.intra.cost;  // the same software stack sends each message
  m.inter_.alpha_s += t.inter.latency_us * 1e-6;
  if (t.inter.bandwidth_gbps > 0)
    m.inter_.beta_s_per_byte = seconds_per_byte(t.inter.bandwidth_gbps);
  m.comm_rate_ = c.comm_rate_during_compute;
  m.step_delay_ms_ = c.step_delay_ms;
  m.step_delay_comm_ms_ = c.step_delay_under_comm_ms;
  m.source_ = "calibrated on " + (c.host.empty() ? std::string("this machine") : c.host);
  return m;
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

double ModelBackend::bucket_ms(uint64_t bytes) const {
  if (is_nccl()) return nccl_best_allreduce(cluster_, double(bytes)).time_us / 1000;
  return allreduce_on_topology_s(algorithm_, topology_, double(bytes), intra_, inter_) * 1000;
}

std::string ModelBackend::describe() const {
  char line[400];
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
        "gamma %.3f GB/s; comm rate during compute %.2f, step delay %.2f ms (+%.2f under comm)",
        backend_.c_str(), algorithm_name(algorithm_), topology_.name().c_str(), source_.c_str(),
        intra_.alpha_s * 1e6, intra_.beta_s_per_byte > 0 ? 1e-9 / intra_.beta_s_per_byte : 0.0,
        intra_.gamma_s_per_byte > 0 ? 1e-9 / intra_.gamma_s_per_byte : 0.0, comm_rate_,
        step_delay_ms_, step_delay_comm_ms_);
  }
  return line;
}

}  // namespace ddpscope::tuner::model
