// The trace's collectives and kernels, read from the run on a thread of their
// own while the writer encodes the rows read before them. Reading SQLite's
// rows and encoding them each took about half of the trace's main thread;
// with the deflater's thread (packet_deflater.h) the three now share the
// cores. Rows come in batches, in the order the single-threaded walk read
// them: every collective in id order, then each file's kernels (rank_order),
// so the trace is byte for byte the same.
//
// The feed's thread uses the reader's connections alone while it runs: the
// caller reads nothing else from the run until next() has said the end (or
// the feed is destroyed, which stops its thread first).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "profiler/core/records.h"
#include "profiler/store/reader.h"
#include "reports/trace/handoff.h"

namespace ddpscope::reports::trace {

// A kernel row, its texts in its batch's `text` (EventBatch::view).
struct KernelRow {
  int rank;
  uint64_t stream;
  int64_t start_ns, end_ns;  // end_ns: kNoTime where not stored
  int64_t device, correlation, collective_id;
  bool for_collective;  // collective_id is stored
  uint32_t name_at, name_size, kind_at, kind_size;
};

struct EventBatch {
  std::vector<CollectiveRecord> collectives;
  std::vector<KernelRow> kernels;
  std::string text;  // kernels' names and kinds, one after another
  std::string_view view(uint32_t at, uint32_t size) const { return {text.data() + at, size}; }
  bool empty() const { return collectives.empty() && kernels.empty(); }
};

class EventFeed {
 public:
  // Starts reading `reader`'s collectives (unless not `with_collectives`),
  // then its kernels: file by file as parts(kernels_by_rank) gives them.
  EventFeed(store::RunReader& reader, bool kernels_by_rank, bool with_collectives = true);
  ~EventFeed();  // stops the thread; unread batches are dropped
  EventFeed(const EventFeed&) = delete;
  EventFeed& operator=(const EventFeed&) = delete;

  // The next batch into `out` (replacing it); false once every row is read.
  // Rethrows the reading thread's error (a damaged file's InputError) where
  // its batch would have come.
  bool next(EventBatch& out);

 private:
  void read();
  void read_kernels(store::RunReader& file, EventBatch& batch);
  void read_kernel_blocks(store::RunReader& file, EventBatch& batch);
  void emit(EventBatch& batch);  // queues a full batch; throws Stopped once stopped

  store::RunReader& reader_;
  const bool kernels_by_rank_, with_collectives_;
  Handoff<EventBatch> batches_{4};
  std::thread thread_;
};

}  // namespace ddpscope::reports::trace
