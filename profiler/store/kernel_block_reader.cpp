#include "profiler/store/kernel_block_reader.h"

#include <string>

#include "profiler/store/schema.h"

namespace ddpscope::store {

bool kernel_blocks_whole(RunReader& file) {
  // The file's own version: its main tables are counted here.
  if (file.file_schema_version() < kKernelBlocksSince) return false;
  Statement s(file.connection(),
              "SELECT (SELECT count(*) FROM main.kernels), "
              "(SELECT coalesce(sum(rows), 0) FROM main.kernel_blocks)");
  return s.step() && s.int64(0) == s.int64(1);
}

void for_each_kernel_block(RunReader& file, int64_t lo, int64_t hi,
                           const std::function<void(const KernelBlock&)>& fn) {
  Statement s(file.connection(),
              "SELECT rank, rows, time_shift_ns, collective_base, data FROM kernel_blocks "
              "WHERE rowid >= ? AND rowid < ? AND " +
                  file.where("kernel_blocks"));
  s.bind(1, lo);
  s.bind(2, hi);
  const int64_t since = file.filter().since_ns, until = file.filter().until_ns;
  KernelBlock block;
  while (s.step()) {
    block.rank = int(s.int64(0));
    if (!decode_kernel_block(s.blob_view(4), s.int64(1), s.int64(2), s.int64(3), block))
      throw InputError(file.path(), "a damaged row of kernel_blocks (rank " +
                                        std::to_string(block.rank) +
                                        "): its bytes do not decode to its rows");
    // As the filter keeps the table's rows (a start inside [since, until)),
    // and those with a start time, which every reader of kernels asks for.
    std::erase_if(block.rows, [&](const KernelBlockRow& r) {
      return r.start_ns == kNoTime || r.start_ns < since || r.start_ns >= until;
    });
    fn(block);
  }
}

}  // namespace ddpscope::store
