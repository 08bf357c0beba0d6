// Which rank was late. A collective is matched across ranks by (comm_id, seq);
// each rank's lateness is how long after the first rank it entered. Ranks on
// other hosts are first put on rank 0's clock, with an offset and a drift per
// host fitted from the completions of synchronising collectives
// (clock_sync.h).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "profiler/analysis/clock_sync.h"
#include "profiler/analysis/iterations.h"

namespace ddpscope::analysis {

// Per (comm_id, seq) the lateness of each rank that entered it: the
// collectives in key order, each a run of (rank, ms) in `entries`, by rank.
struct LatenessByCollective {
  using Key = std::pair<uint64_t, uint64_t>;
  std::vector<Key> keys;
  std::vector<size_t> first;  // keys.size() + 1 offsets into entries
  std::vector<std::pair<int, double>> entries;
  std::optional<double> find(Key key, int rank) const;
};

struct Lateness {
  std::map<int, std::vector<double>> late_ms;  // per rank, one entry per matched collective
  std::map<int, int> last_count;               // collectives the rank entered last
  std::map<int, double> correction_us;         // clock correction per rank, mid-run
  ClockSync clocks;                            // per host: offset, drift, residual
  int matched = 0;                             // collectives seen on every member present
  LatenessByCollective by_collective;          // for per-iteration views
};

// `calls`: every rank's collectives; `host_of`: rank -> host name.
Lateness measure_lateness(const std::vector<Call>& calls,
                          const std::map<int, std::string>& host_of);

}  // namespace ddpscope::analysis
