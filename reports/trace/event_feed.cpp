#include "reports/trace/event_feed.h"

namespace ddpscope::reports::trace {
namespace {

// Rows a batch holds: small enough that the writer starts soon and the
// queue stays a few MiB, large enough that handing a batch over is rare.
constexpr size_t kBatchRows = 8192;

struct Stopped {};  // unwinds the reading thread when the feed is destroyed

std::string by(const std::string& order) { return order.empty() ? "" : " ORDER BY " + order; }

uint32_t append_text(std::string& text, std::string_view s) {
  auto at = uint32_t(text.size());
  text.append(s);
  return at;
}

}  // namespace

EventFeed::EventFeed(store::RunReader& reader, bool kernels_by_rank)
    : reader_(reader), kernels_by_rank_(kernels_by_rank), thread_([this] { read(); }) {}

EventFeed::~EventFeed() {
  batches_.stop();
  thread_.join();
}

bool EventFeed::next(EventBatch& out) { return batches_.pop(out); }

void EventFeed::emit(EventBatch& batch) {
  if (!batches_.push(std::move(batch))) throw Stopped{};
  batch = EventBatch{};
}

void EventFeed::read() {
  try {
    EventBatch batch;
    reader_.for_each_collective([&](const CollectiveRecord& c) {
      batch.collectives.push_back(c);
      if (batch.collectives.size() == kBatchRows) emit(batch);
    });
    for (store::RunReader* file : reader_.parts(kernels_by_rank_)) read_kernels(*file, batch);
    if (!batch.empty()) emit(batch);
    // Here, after every statement of this thread is finalized: the caller
    // may read the run again once it sees the end.
    batches_.close();
  } catch (const Stopped&) {
  } catch (...) {
    batches_.close(std::current_exception());
  }
}

// No ORDER BY but rank_order's (free in a run database, through its index):
// sorting 5M rows would cost a temp b-tree. A stream runs its kernels one
// after another and they are stored as they complete, so a track's kernels
// come nearly in order of time (which keeps the Perfetto writer to one lane
// per track; it is correct in any order).
void EventFeed::read_kernels(store::RunReader& file, EventBatch& batch) {
  store::Statement s(file.connection(),
                     "SELECT rank, stream, name, start_ns, end_ns, kind, collective_id, "
                     "correlation, device FROM kernels WHERE start_ns IS NOT NULL AND " +
                         file.where("kernels") + by(file.rank_order("kernels")));
  while (s.step()) {
    const std::string_view name = s.text_view(2), kind = s.text_view(5);
    batch.kernels.push_back({.rank = int(s.int64(0)),
                             .stream = uint64_t(s.int64(1)),
                             .start_ns = s.required_time(3),
                             .end_ns = s.time(4),
                             .device = s.int64(8),
                             .correlation = s.int64(7),
                             .collective_id = s.int64(6),
                             .for_collective = !s.is_null(6),
                             .name_at = append_text(batch.text, name),
                             .name_size = uint32_t(name.size()),
                             .kind_at = append_text(batch.text, kind),
                             .kind_size = uint32_t(kind.size())});
    if (batch.kernels.size() == kBatchRows) emit(batch);
  }
}

}  // namespace ddpscope::reports::trace
