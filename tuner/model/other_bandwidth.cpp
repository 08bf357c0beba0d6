#include "tuner/model/other_bandwidth.h"

#include <algorithm>

namespace ddpscope::tuner::model {

double shaped_wire_s_per_byte(double gbps) {
  // Per 1448 bytes of TCP payload (MTU 1500, timestamps): a 1514-byte frame
  // (tbf counts from the Ethernet header), and half a 66-byte ACK of the
  // flow the other way (one per two segments) in the same direction.
  return 8.0 / (gbps * 1e9) * (1514.0 + 66.0 / 2) / 1448.0;
}

double tandem_s_per_byte(double first, double second) {
  const double sum = first + second;
  return sum > 0 ? sum - first * second / sum : 0;
}

double OtherBandwidth::ring_s(int p, double bytes) const {
  const double wire_bytes = ring_terms(p, bytes).beta_bytes;
  const double step = bytes_per_step(Algorithm::ring, p, bytes);
  const double fitted = ring_terms(p, bytes).seconds(fit) * fit_by_size.at(step);
  const double not_wire = std::max(0.0, fitted - wire_bytes * wire_fitted_s_per_byte);
  const double shaped = wire_bytes * wire_s_per_byte + not_wire;
  if (!path) return shaped;
  return std::max(shaped, ring_terms(p, bytes).seconds(*path) * path_by_size.at(step));
}

double OtherBandwidth::beta_s_per_byte() const {
  return wire_s_per_byte + std::max(0.0, fit.beta_s_per_byte - wire_fitted_s_per_byte);
}

std::optional<LinkCost> unshaped_path(const Calibration& c, double cpu) {
  if (!c.inter_path) return std::nullopt;
  return scaled(c.inter_path->fit.cost, cpu);  // all of it the CPUs' work
}

OtherBandwidth other_bandwidth(const Calibration& c, double gbps, double cpu, bool with_ratios) {
  OtherBandwidth o;
  o.fit = c.inter->fit.cost;
  o.fit.alpha_s *= cpu;  // the steps' scheduling; the bytes are the wire's
  o.path = unshaped_path(c, cpu);
  const double path_beta = o.path ? o.path->beta_s_per_byte : 0;
  o.wire_fitted_s_per_byte =
      tandem_s_per_byte(shaped_wire_s_per_byte(c.inter->bandwidth_gbps), path_beta);
  o.wire_s_per_byte = tandem_s_per_byte(shaped_wire_s_per_byte(gbps), path_beta);
  if (with_ratios) {
    o.fit_by_size = c.inter->fit.by_size;
    if (c.inter_path) o.path_by_size = c.inter_path->fit.by_size;
  }
  return o;
}

}  // namespace ddpscope::tuner::model
