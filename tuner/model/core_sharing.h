// How the ranks of a CPU job share the machine's cores, and what that says
// about another rank count than the one calibrated (docs/model.md, "Other
// rank counts"). Every rank has a compute thread and a backend thread; each
// busy thread gets a share of a core, min(1, cores / busy threads), and CPU
// work done at a share s takes 1/s as long.
#pragma once

namespace ddpscope::tuner::model {

// The share of a core each of `threads` busy threads gets on `cores` cores.
double core_share(double threads, double cores);

// Communication's speed while the ranks compute, relative to while they wait:
// computing, each core is shared by the compute threads and the backend
// threads (2 per rank), min(1, C/2P); waiting, by the backend threads alone,
// min(1, C/P).
double comm_rate_from_cores(int ranks, double cores);

// What the CPU costs calibrated on `from` ranks become on `to` ranks on the
// same `cores` (all 1 when from == to, or when cores or ranks are unknown).
struct RankScaling {
  // A one-node all-reduce's step (α and β: copies and wake-ups of every
  // rank's backend thread at once) takes 1/share as long.
  double link = 1;
  // A busy-wait step of length L ends after L/s: late by L(1/s - 1), with s
  // the compute threads' share (P busy threads).
  double step_delay = 1;
  // Beside an all-reduce, the backend threads are busy too (2P threads):
  // the extra is L(1/s' - 1/s), s' = min(1, C/2P).
  double step_delay_under_comm = 1;
};
RankScaling scale_ranks(int from, int to, double cores);

// The cores the calibrated ranks really had: `ranks` compute threads whose
// steps of `step_us` ended `step_delay_ms` late each got a share s with
// L/s - L = delay, so they had ranks · s = ranks · L / (L + delay) cores
// between them (other work on the machine took the rest). Never more than
// `cores`; `cores` when the probe's step is unknown.
double effective_cores(int ranks, int cores, double step_delay_ms, double step_us);

}  // namespace ddpscope::tuner::model
