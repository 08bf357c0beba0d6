// Where a job stopped (docs/hangs.md). A hang is read per communicator from
// what every member completed (`collectives`) and what each had entered and
// not completed at its last flush (`inflight`): the first sequence number not
// every member completed names the collective, the ranks inside it are
// waiting, the ranks that never entered it are missing. Point-to-point calls
// (send, recv) are left out: their numbers do not pair ranks up. Which ranks
// called different collectives is mismatches.h.
#pragma once

#include <string>
#include <vector>

#include "profiler/analysis/iterations.h"
#include "profiler/analysis/run_analysis.h"
#include "profiler/store/reader.h"

namespace ddpscope::analysis {

// `calls`: every rank's collectives, classified from DDP's account (their
// bucket indices); `ranks`: the ranks' stats with how each ended; `origin_ns`:
// the run's first collective (waiting_since_s counts from it).
std::vector<Hang> find_hangs(store::RunReader& reader, const std::vector<Call>& calls,
                             const std::vector<RankStats>& ranks, int world_size,
                             int64_t origin_ns);

// "exited with status 1", "killed by signal 9 (SIGKILL)", ...: how a rank
// ended as far as the run tells (exit_code/signal from the launcher, else
// whether its file was finalized, else that it left no file).
std::string how_rank_ended(int exit_code, int signal, bool has_file, bool finalized);

}  // namespace ddpscope::analysis
