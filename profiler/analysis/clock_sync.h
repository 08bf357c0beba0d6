// Every host's clock put on the reference host's (rank 0's): an offset and a
// drift per host, fitted over the whole run from the completions of
// synchronising collectives, which every rank leaves at nearly the same true
// moment (docs/analysis.md "Clocks").
//
// Per host and collective, the sample is how much later the host's ranks say
// it ended than all ranks' median end, at that moment. Samples are cut into
// up to kWindows stretches of equal count; each stretch's medians (time,
// difference) shrug off a straggling completion or a preempted rank, and a
// least-squares line through them gives offset and drift. What the line
// leaves unexplained (the largest stretch-median residual) is kept, so a
// report can say how far to trust the correction. Ranks sharing a host
// share its clock.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "profiler/analysis/iterations.h"

namespace ddpscope::analysis {

struct HostClock {
  double offset_ns = 0;    // the host's clock minus the reference's, at t0
  double drift = 0;        // ns gained per ns (1e-6 = 1 ppm)
  int64_t t0 = 0;          // the run's middle on the reference timeline
  double residual_ns = 0;  // largest |stretch median - line|
  int samples = 0;
  double at(int64_t t) const { return offset_ns + drift * double(t - t0); }
};

// One host's clock against the reference's, looked up once: a loop over a
// million calls does not look the host up by name for each.
struct HostCorrection {
  const HostClock* own = nullptr;  // none: the reference or an unknown host
  const HostClock* reference = nullptr;
  double at(int64_t t) const { return own ? own->at(t) - (reference ? reference->at(t) : 0) : 0; }
};

struct ClockSync {
  std::string reference;  // rank 0's host
  std::map<std::string, HostClock> hosts;
  // What to subtract from a time on `host`'s clock, at about `t`, to put it
  // on the reference host's clock (0 for the reference and unknown hosts).
  double correction_ns(const std::string& host, int64_t t) const { return of(host).at(t); }
  HostCorrection of(const std::string& host) const;
};

// `groups`: each complete synchronising collective's calls, one per rank.
ClockSync fit_clocks(const std::vector<std::vector<const Call*>>& groups,
                     const std::map<int, std::string>& host_of);

}  // namespace ddpscope::analysis
