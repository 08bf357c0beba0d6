#include "injector/runtime/source.h"

#include <atomic>
#include <mutex>

namespace ddpscope::inject {
namespace {

constexpr int kMaxSources = 255;
std::mutex g_mu;
Source g_sources[kMaxSources + 1];  // id 0 is no source
std::atomic<int> g_count{0};

}  // namespace

SourceId register_source(const Source& s) {
  std::lock_guard<std::mutex> lock(g_mu);
  int id = g_count.load(std::memory_order_relaxed) + 1;
  if (id > kMaxSources) return 0;
  g_sources[id] = s;
  g_count.store(id, std::memory_order_release);
  return SourceId(id);
}

const Source* find_source(SourceId id) {
  return id > 0 && id <= g_count.load(std::memory_order_acquire) ? &g_sources[id] : nullptr;
}

int Rows::next_slot() {
  static std::atomic<int> slots{0};
  return slots.fetch_add(1);
}

void Rows::write_staged(store::RankWriter& writer, int32_t rank) {
  for (auto& s : staged_)
    if (s) s->write(writer, rank);
}

bool Rows::staged_empty() const {
  for (const auto& s : staged_)
    if (s && !s->empty()) return false;
  return true;
}

void Rows::discard_staged() {
  for (auto& s : staged_)
    if (s) s->clear();
}

}  // namespace ddpscope::inject
