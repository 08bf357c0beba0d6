#include "reports/trace/event_feed.h"

#include <algorithm>

#include "profiler/store/kernel_block_reader.h"

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

EventFeed::EventFeed(store::RunReader& reader, bool kernels_by_rank, bool with_collectives)
    : reader_(reader),
      kernels_by_rank_(kernels_by_rank),
      with_collectives_(with_collectives),
      thread_([this] { read(); }) {}

EventFeed::~EventFeed() {
  batches_.stop();
  thread_.join();
}

bool EventFeed::next(EventBatch& out) { return batches_.pop(out); }

void EventFeed::emit(EventBatch& batch) {
  const bool kernels = !batch.kernels.empty();
  if (!batches_.push(std::move(batch))) throw Stopped{};
  batch = EventBatch{};
  // The next batch is most likely of the same rows: room for all of them at
  // once rather than by doubling (a copy of the rows each time).
  if (kernels)
    batch.kernels.reserve(kBatchRows);
  else
    batch.collectives.reserve(kBatchRows);
}

void EventFeed::read() {
  try {
    EventBatch batch;
    if (with_collectives_)
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
  if (file.rank_order("kernels").empty() && store::kernel_blocks_whole(file))
    return read_kernel_blocks(file, batch);
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

// The same rows from the file's blocks (store/kernel_blocks.h), in the same
// order (rowid's; a choice of ranks reads the table, by its rank order): a
// block's names and the kinds enter a batch's text once each.
void EventFeed::read_kernel_blocks(store::RunReader& file, EventBatch& batch) {
  constexpr uint32_t kNotYet = UINT32_MAX;
  std::vector<uint32_t> name_at, kind_at(size_t(KernelKind::memset) + 1, kNotYet);
  auto text_at = [&](uint32_t& at, std::string_view text) {
    if (at == kNotYet) at = append_text(batch.text, text);
    return at;
  };
  store::for_each_kernel_block(file, INT64_MIN, INT64_MAX, [&](const store::KernelBlock& b) {
    name_at.assign(b.names.size(), kNotYet);
    for (const auto& k : b.rows) {
      const std::string_view name = b.names[k.name], kind = name_of(k.kind);
      batch.kernels.push_back({.rank = b.rank,
                               .stream = k.stream,
                               .start_ns = k.start_ns,
                               .end_ns = k.end_ns,
                               .device = k.device,
                               .correlation = int64_t(k.correlation),
                               .collective_id = k.collective_id,
                               .for_collective = k.collective_id != 0,
                               .name_at = text_at(name_at[k.name], name),
                               .name_size = uint32_t(name.size()),
                               .kind_at = text_at(kind_at[size_t(k.kind)], kind),
                               .kind_size = uint32_t(kind.size())});
      if (batch.kernels.size() < kBatchRows) continue;
      emit(batch);  // a new batch: its text holds nothing yet
      std::fill(name_at.begin(), name_at.end(), kNotYet);
      std::fill(kind_at.begin(), kind_at.end(), kNotYet);
    }
  });
}

}  // namespace ddpscope::reports::trace
