// `report --ranks LIST --since S --until S` as a RunFilter (reader.h): the
// rank list is numbers and ranges ("0,3,8-15"); since/until are seconds after
// the run's first process started (processes.start_ns). Throws
// InputError with one line naming the flag and what is wrong.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "profiler/store/reader.h"

namespace ddpscope::store {

RunFilter parse_run_filter(const std::string& ranks, std::optional<double> since_s,
                           std::optional<double> until_s, int64_t run_start_ns);

// Throws InputError when the filter names ranks and none of them
// is among `recorded` (sorted): an empty report would look like a bug.
void check_ranks_exist(const RunFilter& f, const std::vector<int>& recorded);

// The part in words, for the report's header: "ranks 2-4, 1.200 s to 2.400 s
// after the start" ("" for the whole run).
std::string describe(const RunFilter& f, int64_t run_start_ns);

// The run's first process start on its timeline (0 if unknown).
int64_t run_start_ns(RunReader& reader);

}  // namespace ddpscope::store
