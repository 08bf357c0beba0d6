// The kernels table's rows again, packed (the kernel_blocks table): the
// writer adds each rank's kernels to a block as it adds their rows, in the
// same transaction. SQLite decodes a kernels row through its VM and one API
// call a column; a block is one blob, its rows decoded by a tight loop. On
// bench_report_scale's run (5M kernels) the rows' read was a third of
// `report -q` (2.4-2.6 s, 1.6-1.8 s with the table emptied); read from the
// blocks, the analysis took 0.68x the time (docs/performance.md).
//
// The kernels table stays the truth, the one users' SQL reads: a reader
// takes the blocks only where they hold as many rows as it
// (kernel_blocks_whole), so a file written otherwise (rows inserted by SQL,
// an older ddpscope, record's live window) reads its rows as before; a row
// changed or deleted by SQL empties the blocks (kernel_blocks.cpp's
// triggers, schema v9).
//
// A block is one rank's kernels in the order their rows were inserted;
// blocks in rowid order are the kernels in rowid order. Its two shift
// columns follow table.h's convention, so that the merge and a placed rank
// file move its times and collective ids as they move the rows': a time is
// the stored one + time_shift_ns (kNoTime stays), a collective id the stored
// one + collective_base (0, none, stays).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "profiler/core/records.h"
#include "profiler/store/sqlite.h"
#include "profiler/store/table.h"

namespace ddpscope::store {

const TableSpec& kernel_blocks_table();

// One kernel of a block, as read: times on the reader's timeline.
struct KernelBlockRow {
  int64_t start_ns = kNoTime, end_ns = kNoTime;
  uint64_t stream = 0, correlation = 0;
  int64_t collective_id = 0;  // 0: none (NULL in kernels)
  int32_t device = -1;
  uint32_t name = 0;  // index into KernelBlock::names
  KernelKind kind = KernelKind::compute;
};

struct KernelBlock {
  int rank = 0;
  std::vector<std::string> names;
  std::vector<KernelBlockRow> rows;
};

// Packs kernels into one block's bytes, row by row as they come.
class KernelBlockEncoder {
 public:
  void add(const KernelRecord& k);
  size_t rows() const { return rows_; }
  // The block's bytes; the encoder starts the next block.
  std::string take();

 private:
  std::string body_;
  std::vector<std::string_view> names_;  // keys of name_ids_, in index order
  std::unordered_map<std::string, uint32_t> name_ids_;
  size_t rows_ = 0;
  KernelRecord last_;
};

// Unpacks `data` into `out` (cleared first): its rows with their times
// shifted and ids based as above. False when the bytes are not a block of
// `rows` rows (a damaged file).
bool decode_kernel_block(std::string_view data, int64_t rows, int64_t time_shift_ns,
                         int64_t collective_base, KernelBlock& out);

// The writer's side (writer.h): each rank's run of kernels, up to
// kRowsPerBlock, becomes a row of kernel_blocks on flush().
class KernelBlockWriter {
 public:
  explicit KernelBlockWriter(Connection& conn);
  void add(const KernelRecord& k);
  void flush();

 private:
  // Small enough that readers on several threads share a file's blocks out
  // evenly, large enough that a block's own row costs nothing beside them.
  static constexpr size_t kRowsPerBlock = 4096;
  Statement insert_;
  KernelBlockEncoder encoder_;
  int rank_ = 0;
};

}  // namespace ddpscope::store
