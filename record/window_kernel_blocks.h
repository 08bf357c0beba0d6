// The live window's kernel blocks (profiler/store/kernel_blocks.h), trimmed
// as its kernels rows are. The window copies each rank file's blocks beside
// its rows, so that the window's analysis reads its kernels from the blocks:
// at 1,024 rank files x 100 steps (3.6M kernels) that took the look's kernel
// read from 1.6 s to 0.3 s. A block cannot be trimmed row by row in SQL, so
// the window keeps each block's earliest start time and, when the window
// slides past a block's first kernel, drops the block or writes it again
// without the kernels that started before the window: the blocks then hold
// the rows the trimmed table holds (kernel_blocks_whole), kernels without a
// start time included, which the table keeps too.
#pragma once

#include <cstdint>
#include <map>

#include "profiler/store/sqlite.h"

namespace ddpscope::record {

struct BlockStatements;

class WindowKernelBlocks {
 public:
  // Learns the blocks `window` gained since the last call. One that does not
  // decode is deleted (see the .cpp).
  void note_copied(store::Connection& window);
  // Inside the caller's transaction: the blocks as the table will be once
  // its kernels that started before `since_wall_ns` are deleted.
  void drop_before(store::Connection& window, int64_t since_wall_ns);

 private:
  void rewrite(BlockStatements& st, int64_t rowid, int64_t since_wall_ns);

  // Each block's earliest kernel start, by the block's rowid in the window.
  std::map<int64_t, int64_t> first_start_;
  int64_t noted_up_to_ = 0;
};

}  // namespace ddpscope::record
