// What the merge (merge.h) and the reading of a run's rank files together
// (reader.h) both take from each rank file, checked the same way in both.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "profiler/core/records.h"
#include "profiler/store/launch_account.h"
#include "profiler/store/sqlite.h"

namespace ddpscope::store {

class RunReader;

struct RankFileHead {
  std::string path;
  ProcessRecord process;
  std::map<std::string, std::string> meta;
  int version = 0;
};

// Its one process row, meta and schema version; InputError naming the file
// when it holds other than one process (a merged run.db, say).
RankFileHead head_of(RunReader& rank_file);

// InputError naming the second file that claims a rank the first did.
void check_ranks_unique(const std::vector<RankFileHead>& heads);

// The run's meta as the merge writes it: the first file's, on the wall
// timeline, the ranks counted and named, the injector's counts summed.
std::map<std::string, std::string> merged_meta(const std::vector<RankFileHead>& heads);

// What `record` knew beside the rank files, into `db`'s rank_exits and
// stacks tables: the exits as they are, each stack dump under the rank whose
// process wrote it.
void write_launch_account(Connection& db, const LaunchAccount& launch,
                          const std::vector<RankFileHead>& heads);

}  // namespace ddpscope::store
