// Reading a file's kernels from its blocks (kernel_blocks.h): apart from
// the codec, which the injector's writer links without the reader.
#pragma once

#include <cstdint>
#include <functional>

#include "profiler/store/kernel_blocks.h"
#include "profiler/store/reader.h"

namespace ddpscope::store {

// Whether `file`'s blocks hold every row of its kernels table: then
// for_each_kernel_block reads what the table would give.
bool kernel_blocks_whole(RunReader& file);

// The blocks of `file` whose rowid is in [lo, hi), in rowid order, each
// with the rows that the file's filter keeps (RunReader::where) and that
// have a start time. InputError naming the file for a damaged block.
void for_each_kernel_block(RunReader& file, int64_t lo, int64_t hi,
                           const std::function<void(const KernelBlock&)>& fn);

}  // namespace ddpscope::store
