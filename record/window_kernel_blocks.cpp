#include "record/window_kernel_blocks.h"

#include <algorithm>
#include <string>
#include <vector>

#include "profiler/store/kernel_blocks.h"

namespace ddpscope::record {

namespace {

constexpr const char* kSelectBlocks =
    "SELECT rowid, rank, rows, time_shift_ns, collective_base, data FROM kernel_blocks ";

// The block at the statement's row into `out`, decoded (times on the
// window's wall timeline, collective ids the window's); false for bytes that
// are not a block.
bool decode_at(const store::Statement& s, store::KernelBlock& out) {
  out.rank = int(s.int64(1));
  return store::decode_kernel_block(s.blob_view(5), s.int64(2), s.int64(3), s.int64(4), out);
}

// INT64_MAX for a block of kernels without start times only (never trimmed:
// the table keeps such rows too).
int64_t earliest_start(const store::KernelBlock& block) {
  int64_t first = INT64_MAX;
  for (const auto& k : block.rows)
    if (k.start_ns != kNoTime) first = std::min(first, k.start_ns);
  return first;
}

}  // namespace

// The statements a refresh's trims run, each prepared once for all its blocks.
struct BlockStatements {
  explicit BlockStatements(store::Connection& db)
      : read(db, std::string(kSelectBlocks) + "WHERE rowid = ?"),
        put(db,
            "UPDATE kernel_blocks SET rows = ?, time_shift_ns = 0, collective_base = 0, data = ? "
            "WHERE rowid = ?"),
        drop(db, "DELETE FROM kernel_blocks WHERE rowid = ?") {}
  void delete_block(int64_t rowid) {
    drop.bind(1, rowid);
    drop.run();
  }
  store::Statement read, put, drop;
};

// A block that does not decode (a damaged rank file) leaves the window: its
// blocks then hold fewer rows than its table, so its kernels are read from
// the table, the truth, until that block's rows have slid out too.
void WindowKernelBlocks::note_copied(store::Connection& db) {
  std::vector<int64_t> damaged;
  {
    store::Statement s(db, std::string(kSelectBlocks) + "WHERE rowid > ? ORDER BY rowid");
    s.bind(1, noted_up_to_);
    store::KernelBlock block;
    while (s.step()) {
      const int64_t rowid = s.int64(0);
      noted_up_to_ = rowid;
      if (!decode_at(s, block)) {
        damaged.push_back(rowid);
        continue;
      }
      first_start_[rowid] = earliest_start(block);
    }
  }
  if (damaged.empty()) return;
  BlockStatements st(db);
  for (int64_t rowid : damaged) st.delete_block(rowid);
}

void WindowKernelBlocks::drop_before(store::Connection& db, int64_t since_wall_ns) {
  std::vector<int64_t> touched;
  for (const auto& [rowid, first] : first_start_)
    if (first < since_wall_ns) touched.push_back(rowid);
  if (touched.empty()) return;
  BlockStatements st(db);
  for (int64_t rowid : touched) rewrite(st, rowid, since_wall_ns);
}

// The block without its kernels that started before the window: written
// again with its times and ids as read (no shift, no base), or deleted when
// nothing of it is left.
void WindowKernelBlocks::rewrite(BlockStatements& st, int64_t rowid, int64_t since_wall_ns) {
  st.read.bind(1, rowid);
  store::KernelBlock block;
  const bool read = st.read.step() && decode_at(st.read, block);
  st.read.reset();
  if (!read) return first_start_.erase(rowid), void();
  store::KernelBlockEncoder encoder;
  int64_t first = INT64_MAX;
  for (const auto& k : block.rows) {
    if (k.start_ns != kNoTime && k.start_ns < since_wall_ns) continue;
    if (k.start_ns != kNoTime) first = std::min(first, k.start_ns);
    encoder.add({.rank = block.rank,
                 .device = k.device,
                 .stream = k.stream,
                 .name = block.names[k.name],
                 .start_ns = k.start_ns,
                 .end_ns = k.end_ns,
                 .correlation = k.correlation,
                 .collective_id = k.collective_id,
                 .kind = k.kind});
  }
  if (encoder.rows() == 0) {
    st.delete_block(rowid);
    first_start_.erase(rowid);
    return;
  }
  const int64_t rows = int64_t(encoder.rows());
  const std::string data = encoder.take();
  st.put.bind(1, rows);
  st.put.bind_blob(2, data);
  st.put.bind(3, rowid);
  st.put.run();
  first_start_[rowid] = first;
}

}  // namespace ddpscope::record
