// When a recording is complete enough to merge, and who merges it. With `-o`
// on a directory several hosts share, every host's `record` ends when its own
// ranks do; merging then would race the hosts still writing. So a record
// merges only when the directory holds a rank file for each of the job's
// `world_size` ranks (as a launcher's variables gave it; without a launcher,
// the files there are the world) and each is finished: closed by its writer (meta
// `closed`), or written by a process on this host that no longer exists (a
// rank killed with `kill -9`: its file is readable up to its last flush).
// Then the merge is claimed with an exclusive create (claim_merge), so of
// several hosts finishing at once exactly one merges. A rank that wrote no
// file at all (it made no call we record) leaves the run unmerged: `ddpscope
// merge DIR` merges what is there.
#pragma once

#include <string>
#include <vector>

namespace ddpscope::store {

struct Completion {
  bool complete = false;
  int world_size = 0;  // the job's, from the rank files (0: no rank file)
  int ranks = 0;       // distinct ranks with a file
  int unfinished = 0;  // files still being written (or unreadable yet)
  std::vector<std::string> files;
};

// `this_host`: gethostname() of the caller, to tell a dead local writer.
Completion check_completion(const std::string& dir, const std::string& this_host);

// True when a rank file in `dir` is finished (closed, or its writer a process
// of this host that is gone): a finished recording, merged or not, which a
// new `record` must not join. Files still being written are other hosts'
// ranks of the same job.
bool holds_finished_rank_file(const std::string& dir, const std::string& this_host);

// The ranks of 0..nproc-1 with no rank-<R>.db in `dir` (they died before
// their first flush, or made no call ddpscope records).
std::vector<int> ranks_without_file(const std::string& dir, int nproc);
// "0, 2, 5"
std::string rank_list(const std::vector<int>& ranks);

// True for the one caller that creates DIR/.merge-claim.
bool claim_merge(const std::string& dir);

}  // namespace ddpscope::store
