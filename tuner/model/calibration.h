// Calibration: a backend's link cost (α, β and, where it can be told apart, γ)
// fitted by least squares from measured all-reduce times, with how well the
// fit explains them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tuner/model/collective_cost.h"
#include "tuner/model/size_correction.h"

namespace ddpscope::tuner::model {

// One measurement: all-reduces of `bucket_bytes`, run back to back on one
// comm stream over `nranks` ranks, took `seconds` in all. (A single
// all-reduce is one bucket; a sweep setting's buckets queued together are
// several — the fit sums their terms.)
struct CommObservation {
  Algorithm algorithm = Algorithm::ring;  // what the backend ran
  int nranks = 2;
  std::vector<double> bucket_bytes;
  double seconds = 0;
  double mean_bucket_bytes() const;
};

struct LinkFit {
  LinkCost cost;
  bool gamma_fitted = false;  // only when the observations tell γ from β (below)
  int observations = 0;
  int distinct_sizes = 0;
  double r2 = 0;                // of the times, 1 = perfect
  double median_rel_error = 0;  // |predicted - measured| / measured over observations
  double max_rel_error = 0;
  // Measured / fitted at each measured size (the quality figures above are
  // the fit's alone): predictions of the calibrated algorithm on this link
  // multiply by it (size_correction.h).
  SizeCorrection by_size;
};

// A fit needs at least three distinct bucket sizes (α and β are told apart by
// how time grows with size; three points also show whether a line fits).
// Each observation is weighted by 1/seconds², so the fit minimises relative
// error and the small sizes that pin α count as much as the large ones.
// γ is told from β only by observations whose bytes-on-the-wire to
// bytes-reduced ratios differ: a ring's is 2:1 at every rank count, so a
// ring-only calibration folds reduction into β — exactly right for ring
// predictions at any rank count; recursive doubling (1:1) beside it separates
// them. Then the ratio of measured to fitted time at each size (`by_size`).
// Throws std::invalid_argument.
LinkFit fit_link_cost(const std::vector<CommObservation>& observations);

// The link between nodes, fitted from all-reduces across the nodes of an
// emulated topology (a flat ring's every step waits for the slowest link, so
// a ring over the nodes times that link, per message and per byte).
struct InterLinkFit {
  LinkFit fit;
  std::string topology;       // canonical name of the topology it was measured on
  double bandwidth_gbps = 0;  // that topology's shaped inter bandwidth (0: unshaped)
};

// What the model knows about one backend on one machine or cluster.
struct Calibration {
  std::string backend = "gloo";  // the backend measured
  std::string host;              // where
  Algorithm algorithm = Algorithm::ring;
  LinkFit intra;  // ranks on one node (the machine the points came from)
  // Two ranks on that node, measured beside `intra` when it has more ranks
  // than two: a ring's steps at the pace of one rank with the cores to
  // spare. Fewer ranks than calibrated are not faster than this, however
  // little they share the cores (ModelBackend::calibrated). Absent in files
  // written before it, and when two ranks were calibrated (`intra` is it).
  std::optional<LinkFit> intra_pair;
  // Between nodes, where a multi-node topology was emulated for calibration;
  // absent, the model takes the declared bandwidth (docs/model.md).
  std::optional<InterLinkFit> inter;
  // The same path as `inter` with nothing shaped (bandwidth 0): how fast the
  // ranks' CPUs move bytes across the emulated nodes (TCP, veth, bridge),
  // the stage every byte passes besides the wire at another bandwidth
  // (ModelBackend::calibrated). Absent in files
  // written before it, and without a shaped inter fit.
  std::optional<InterLinkFit> inter_path;
  // How fast communication runs while the rank computes, relative to when it
  // waits (1 = unaffected). On a CPU machine whose cores are all computing,
  // the backend's threads get a share of a core; on a GPU, NCCL's kernels get
  // their own SMs (1). Measured from a replay with compute, or derived from
  // the core count (docs/model.md).
  double comm_rate_during_compute = 1.0;
  // How much later than its compute a compute interval ends, on the slowest
  // rank: the compute thread notices the end only when it is scheduled, and
  // other threads (the other ranks, anything else running) share the cores.
  // 0 on a GPU. While an all-reduce is in flight, steps end later still.
  double step_delay_ms = 0;
  double step_delay_under_comm_ms = 0;
  // The compute step the delays were measured with (0: any length). A step
  // shorter than a scheduler slice ends late in proportion to its length
  // (it ends only while its thread holds a core, docs/model.md), so shorter
  // steps get proportionally less; longer ones the delay as measured.
  double step_delay_step_us = 0;
  // The same probe on two ranks, measured beside `intra_pair`: ranks with a
  // core each lose little to sharing, and a 2-rank topology takes these as
  // measured rather than scaled from the calibrated ranks (whose
  // oversubscribed probe reads as fewer cores than there are). Absent in
  // files written before it and where `intra_pair` is.
  struct StepDelays {
    double alone_ms = 0;
    double under_comm_ms = 0;
  };
  std::optional<StepDelays> pair_step_delays;
  // The cores of the machine calibrated (0: unknown). The delays and the
  // rate above are those of every rank computing at once on them.
  int cores = 0;
  // The ranks that shared them (0: unknown; files written before it: their
  // points'). Another rank count shares the same cores differently
  // (core_sharing.h).
  int ranks = 0;
  std::string comm_rate_source;                    // how these two were obtained
  std::vector<CommObservation> points;             // intra's
  std::vector<CommObservation> intra_pair_points;  // intra_pair's
  std::vector<CommObservation> inter_points;       // inter's
  std::vector<CommObservation> inter_path_points;  // inter_path's
};

// The rank count the calibration measured (`ranks`, else its one-node
// points'; 0 if neither).
int calibrated_ranks(const Calibration& c);

}  // namespace ddpscope::tuner::model
