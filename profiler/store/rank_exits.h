// How each rank that `record --nproc` started ended. The launcher knows it,
// the ranks' files cannot (a rank killed by a signal writes nothing more), so
// record leaves it beside the rank files, in DIR/rank-exits.tsv, and every
// merge of DIR (record's own, or `ddpscope merge DIR` later) puts it into the
// run database's rank_exits table.
#pragma once

#include <string>
#include <vector>

#include "profiler/core/records.h"

namespace ddpscope::store {

// DIR/rank-exits.tsv
std::string rank_exits_path(const std::string& dir);

// Written atomically; one line a rank: "rank<TAB>exit_code<TAB>signal" (-1 /
// 0 where unknown).
void write_rank_exits(const std::string& dir, const std::vector<RankExitRecord>& exits);

// What DIR/rank-exits.tsv says; empty when there is none (a job started by
// another launcher). InputError naming the file for a malformed line.
std::vector<RankExitRecord> read_rank_exits(const std::string& dir);

}  // namespace ddpscope::store
