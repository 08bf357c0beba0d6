// The live window's kernel blocks (profiler/store/kernel_blocks.h), trimmed
// as its kernels rows are. The window copies each rank file's blocks beside
// its rows, so that the window's analysis reads its kernels from the blocks:
// at 1,024 rank files x 100 steps (3.6M kernels) that took the look's kernel
// read from 1.6 s to 0.3 s. A block cannot be trimmed row by row in SQL, so
// the window keeps each block's span of start times and, when the window
// slides past a block's first kernel, drops the block or writes it again
// without the kernels that started before the window: the blocks then hold
// the rows the trimmed table holds (kernel_blocks_whole), kernels without a
// start time included, which the table keeps too.
#pragma once

#include <cstdint>
#include <map>

#include "profiler/store/sqlite.h"

namespace ddpscope::record {

class WindowKernelBlocks {
 public:
  // Learns the spans of the blocks `window` gained since the last call.
  void note_copied(store::Connection& window);
  // Inside the caller's transaction: the blocks as the table will be once
  // its kernels that started before `since_wall_ns` are deleted.
  void drop_before(store::Connection& window, int64_t since_wall_ns);

 private:
  struct Span {
    int64_t first = INT64_MAX;  // earliest start time of a kernel in the block
    bool untimed = false;       // a kernel without a start time, which stays
  };
  void rewrite(store::Connection& window, int64_t rowid, int64_t since_wall_ns);

  std::map<int64_t, Span> spans_;  // by the window's rowid of the block
  int64_t noted_up_to_ = 0;
};

}  // namespace ddpscope::record
