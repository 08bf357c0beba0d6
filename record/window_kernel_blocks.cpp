#include "record/window_kernel_blocks.h"

#include <algorithm>
#include <string>

#include "profiler/core/input_error.h"
#include "profiler/store/kernel_blocks.h"

namespace ddpscope::record {

namespace {

constexpr const char* kSelectBlocks =
    "SELECT rowid, rank, rows, time_shift_ns, collective_base, data FROM kernel_blocks ";

// The block at the statement's row, decoded (times on the window's wall
// timeline, collective ids the window's).
store::KernelBlock decoded(const store::Statement& s, const std::string& path) {
  store::KernelBlock block;
  block.rank = int(s.int64(1));
  if (!store::decode_kernel_block(s.blob_view(5), s.int64(2), s.int64(3), s.int64(4), block))
    throw InputError(path, "a damaged row of kernel_blocks (rank " + std::to_string(block.rank) +
                               "): its bytes do not decode to its rows");
  return block;
}

}  // namespace

void WindowKernelBlocks::note_copied(store::Connection& db) {
  store::Statement s(db, std::string(kSelectBlocks) + "WHERE rowid > ? ORDER BY rowid");
  s.bind(1, noted_up_to_);
  while (s.step()) {
    const int64_t rowid = s.int64(0);
    Span span;
    for (const auto& k : decoded(s, db.path()).rows) {
      if (k.start_ns == kNoTime)
        span.untimed = true;
      else
        span.first = std::min(span.first, k.start_ns);
    }
    spans_[rowid] = span;
    noted_up_to_ = rowid;
  }
}

void WindowKernelBlocks::drop_before(store::Connection& db, int64_t since_wall_ns) {
  std::vector<int64_t> touched;
  for (const auto& [rowid, span] : spans_)
    if (span.first < since_wall_ns) touched.push_back(rowid);
  for (int64_t rowid : touched) rewrite(db, rowid, since_wall_ns);
}

// The block without its kernels that started before the window: written
// again with its times and ids as read (no shift, no base), or deleted when
// nothing of it is left.
void WindowKernelBlocks::rewrite(store::Connection& db, int64_t rowid, int64_t since_wall_ns) {
  store::Statement s(db, std::string(kSelectBlocks) + "WHERE rowid = ?");
  s.bind(1, rowid);
  if (!s.step()) return spans_.erase(rowid), void();
  const store::KernelBlock block = decoded(s, db.path());
  store::KernelBlockEncoder encoder;
  Span span;
  for (const auto& k : block.rows) {
    if (k.start_ns != kNoTime && k.start_ns < since_wall_ns) continue;
    if (k.start_ns == kNoTime)
      span.untimed = true;
    else
      span.first = std::min(span.first, k.start_ns);
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
    store::Statement drop(db, "DELETE FROM kernel_blocks WHERE rowid = ?");
    drop.bind(1, rowid);
    drop.run();
    spans_.erase(rowid);
    return;
  }
  store::Statement put(db,
                       "UPDATE kernel_blocks SET rows = ?, time_shift_ns = 0, collective_base = 0, "
                       "data = ? WHERE rowid = ?");
  const int64_t rows = int64_t(encoder.rows());
  const std::string data = encoder.take();
  put.bind(1, rows);
  put.bind_blob(2, data);
  put.bind(3, rowid);
  put.run();
  spans_[rowid] = span;
}

}  // namespace ddpscope::record
