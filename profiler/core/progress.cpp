#include "profiler/core/progress.h"

#include <atomic>

namespace ddpscope::core::progress {
namespace {
std::atomic<Sink> g_sink{nullptr};
thread_local bool t_silent = false;
}  // namespace

void set_sink(Sink sink) { g_sink.store(sink, std::memory_order_release); }

void update(std::string_view stage, uint64_t done, uint64_t total) {
  if (t_silent) return;
  if (Sink s = g_sink.load(std::memory_order_acquire)) s(stage, done, total);
}

void finish() { update({}, 0, 0); }

Silence::Silence() : was_(t_silent) { t_silent = true; }
Silence::~Silence() { t_silent = was_; }

}  // namespace ddpscope::core::progress
