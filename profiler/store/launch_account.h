// What `record` knows of a job beside the rank files, kept in the output
// directory so that every merge of it (record's own, or `ddpscope merge DIR`
// later) puts it into the run database:
//  * how each rank that `record --nproc` started ended (DIR/rank-exits.tsv;
//    the ranks' files cannot tell: a rank killed by a signal writes nothing
//    more) -> rank_exits;
//  * the Python stacks a rank dumped when record asked for them
//    (DIR/stacks-<pid>.txt, written by faulthandler from the start-up hook,
//    ddpscope_ddp/stacks.py) -> stacks.
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

// A process's dumped stacks (faulthandler's text), by pid; empty files are
// left out.
struct StackDump {
  int64_t pid = 0;
  std::string text;
};
std::vector<StackDump> read_stack_dumps(const std::string& dir);

// Everything above, for merge_rank_files.
struct LaunchAccount {
  std::vector<RankExitRecord> exits;
  std::vector<StackDump> stacks;
};
LaunchAccount read_launch_account(const std::string& dir);

}  // namespace ddpscope::store
