#include "injector/runtime/thread_buffer.h"

#include <mutex>

namespace ddpscope::inject {

ThreadBuffer::ThreadBuffer(uint32_t capacity_pow2, uint32_t tid)
    : tid_(tid),
      capacity_(capacity_pow2),
      other_limit_(capacity_pow2 - capacity_pow2 / 4),
      mask_(capacity_pow2 - 1),
      // Value-initialised: every page is touched now, at thread attach, so the
      // hot path never takes a first-touch page fault.
      slots_(new Event[capacity_pow2]()) {}

ThreadBuffer* BufferRegistry::acquire(uint32_t capacity_pow2, uint32_t tid) {
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  int n = count_.load(std::memory_order_relaxed);
  for (int i = 0; i < n; ++i) {
    ThreadBuffer* b = buffers_[i].load(std::memory_order_relaxed);
    // An orphan is adoptable once the writer has drained it.
    if (b->orphaned.load(std::memory_order_acquire) && b->empty()) {
      b->adopt(tid);
      b->orphaned.store(false, std::memory_order_release);
      return b;
    }
  }
  if (n == kMaxThreads) return nullptr;
  auto* b = new ThreadBuffer(capacity_pow2, tid);
  buffers_[n].store(b, std::memory_order_release);
  count_.store(n + 1, std::memory_order_release);
  return b;
}

BufferRegistry::~BufferRegistry() {
  for (int i = 0; i < size(); ++i) delete at(i);
}

uint64_t BufferRegistry::dropped() const {
  uint64_t d = 0;
  for (int i = 0; i < size(); ++i) d += at(i)->dropped();
  return d;
}

uint64_t BufferRegistry::dropped_comm() const {
  uint64_t d = 0;
  for (int i = 0; i < size(); ++i) d += at(i)->dropped_comm();
  return d;
}

}  // namespace ddpscope::inject
