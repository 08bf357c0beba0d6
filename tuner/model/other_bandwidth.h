// The inter-node ring at another bandwidth than the one its link was fitted
// on (an emulated topology's shaped link). Per bucket, two bounds:
//  - the bytes at the new wire's pace, in a row with the ranks' CPUs that
//    move them (tandem_s_per_byte), plus what the fit measured at that size
//    beyond its own wire's time (the steps' scheduling, CPU work no
//    bandwidth changes);
//  - the same ring with nothing shaped (the calibration's inter_path): a
//    faster wire cannot make the CPUs faster, so no bandwidth beats it.
// The slower of the two. At the fitted bandwidth the fit itself applies
// (ModelBackend), not this.
#pragma once

#include <optional>

#include "tuner/model/calibration.h"

namespace ddpscope::tuner::model {

struct OtherBandwidth {
  LinkCost fit;  // the inter fit, its steps scaled to these ranks
  SizeCorrection fit_by_size;
  double wire_fitted_s_per_byte = 0;  // wire and path in a row, at the fitted bandwidth
  double wire_s_per_byte = 0;         // the same at the topology's bandwidth
  std::optional<LinkCost> path;       // unshaped, scaled to these ranks
  SizeCorrection path_by_size;
  // One ring all-reduce of `bytes` over `p` ranks, seconds.
  double ring_s(int p, double bytes) const;
  // Per byte without the per-size shape: the wire and path in a row, plus
  // what the fit's β took beyond them at the fitted bandwidth.
  double beta_s_per_byte() const;
};

// The calibration's unshaped path (inter_path), its CPU costs scaled by
// `cpu` to these ranks; none without one.
std::optional<LinkCost> unshaped_path(const Calibration& c, double cpu);

// Seconds per byte of all-reduce payload over a link shaped to `gbps` the
// way tune emulates it (tbf counting Ethernet frames of TCP segments, and
// the ACKs of the flow the other way): 8.547 ns at 1 Gbit/s.
double shaped_wire_s_per_byte(double gbps);

// Seconds per byte through two stages in a row with no room to queue between
// them (the wire, and the ranks' CPUs moving the bytes across the path):
// a tandem of two servers with exponential service times and no buffer
// passes a unit every a + b - ab/(a + b) on average (the classical
// two-station result: throughput μ1μ2(μ1 + μ2) / (μ1² + μ1μ2 + μ2²)). At
// least the slower stage, at most the sum; a alone when b is 0.
double tandem_s_per_byte(double a, double b);

// For `c`'s inter fit (which must exist, shaped) on a topology shaped to
// `gbps`. `cpu` scales the CPU costs to the topology's ranks
// (core_sharing.h); `with_ratios` keeps the per-size ratios (the calibrated
// algorithm only).
OtherBandwidth other_bandwidth(const Calibration& c, double gbps, double cpu, bool with_ratios);

}  // namespace ddpscope::tuner::model
