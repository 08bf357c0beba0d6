// A recording's output directory, as `ddpscope record` treats it: which
// directories it may write into, and when and how the rank files there are
// merged into run.db (profiler/store/completion.h says when a recording is
// complete; several hosts may share the directory).
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "profiler/core/records.h"

namespace ddpscope::record {

// ddpscope-<YYYYmmdd-HHMMSS> in local time.
std::string default_recording_dir();

// An existing directory may be reused, but never one that holds a finished
// (or merging) recording; InputError otherwise. Rank files still being
// written are allowed: with -o on a shared directory, other hosts' ranks of
// the same job started first.
void check_recording_dir(const std::string& dir);

// Creates it; false when it cannot be written.
bool prepare_recording_dir(const std::string& dir);

// Merges once every rank of the job has finished its file, on whichever host
// sees that first; other hosts say where things stand (on `log`). With
// `nproc` > 0 every rank was this record's and has ended: what exists is all
// there will be, so it is merged and the ranks without a file are named.
void merge_recording(const std::string& dir, int nproc, std::ostream& log);

// After the job: with `nproc` > 0 keeps how each rank ended
// (profiler/store/launch_account.h), then merge_recording.
void finish_recording(const std::string& dir, int nproc, const std::vector<RankExitRecord>& ends,
                      std::ostream& log);

}  // namespace ddpscope::record
