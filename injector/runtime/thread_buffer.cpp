#include "injector/runtime/thread_buffer.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <new>
#include <vector>

namespace ddpscope::inject {

namespace {

size_t ring_bytes(uint32_t capacity) { return size_t(capacity) * sizeof(Event); }

// Fault `bytes` of `p` in, writable, without writing them (the producer may be
// writing there). Before Linux 5.14 the kernel refuses; the pages then fault
// in as the ring is first written, as they would anyway.
void populate(void* p, size_t bytes) { madvise(p, bytes, MADV_POPULATE_WRITE); }

// Null when the system refuses the mapping (address space or memory limits).
Event* map_ring(uint32_t capacity) {
  size_t bytes = ring_bytes(capacity);
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  // Nobody else sees the ring yet: writing zeros is the portable prefault.
  memset(p, 0, std::min(bytes, ThreadBuffer::kPrefaultBytes));
  return static_cast<Event*>(p);
}

Event* map_ring_or_throw(uint32_t capacity) {
  Event* slots = map_ring(capacity);
  if (!slots) throw std::bad_alloc();
  return slots;
}

}  // namespace

ThreadBuffer::ThreadBuffer(uint32_t capacity_pow2, uint32_t tid, Event* slots)
    : tid_(tid),
      capacity_(capacity_pow2),
      other_limit_(capacity_pow2 - capacity_pow2 / 4),
      mask_(capacity_pow2 - 1),
      slots_(slots) {}

ThreadBuffer::ThreadBuffer(uint32_t capacity_pow2, uint32_t tid)
    : ThreadBuffer(capacity_pow2, tid, map_ring_or_throw(capacity_pow2)) {}

ThreadBuffer* ThreadBuffer::create(uint32_t capacity_pow2, uint32_t tid) {
  Event* slots = map_ring(capacity_pow2);
  if (!slots) return nullptr;
  auto* b = new (std::nothrow) ThreadBuffer(capacity_pow2, tid, slots);
  if (!b) munmap(slots, ring_bytes(capacity_pow2));
  return b;
}

ThreadBuffer::~ThreadBuffer() { munmap(slots_, bytes()); }

void ThreadBuffer::trim(uint64_t head) {
  size_t bytes = this->bytes();
  madvise(slots_, bytes, MADV_DONTNEED);  // private anonymous: reads back as zeros
  // Nobody writes the ring now (see drain): zeros are the portable prefault.
  size_t from = size_t(head & mask_) * sizeof(Event);
  size_t keep = std::min(bytes, ThreadBuffer::kPrefaultBytes);
  size_t first = std::min(keep, bytes - from);
  memset(reinterpret_cast<char*>(slots_) + from, 0, first);
  memset(slots_, 0, keep - first);  // wrapped round to the start
}

void ThreadBuffer::trim_ended(uint64_t head, bool drained) {
  if (drained) {
    trim(head);
  } else if (!trimmed_) {
    if (!claim_orphan()) return;
    trim(head);
    orphaned.store(true, std::memory_order_release);
  } else {
    return;
  }
  trimmed_ = true;
  warm_ = false;  // its next owner is warmed afresh if it lives long enough
  live_flushes_ = 0;
}

bool ThreadBuffer::claim_orphan() {
  bool expected = true;
  return orphaned.compare_exchange_strong(expected, false, std::memory_order_acq_rel);
}

bool ThreadBuffer::adopt(uint32_t tid) {
  if (!empty() || !claim_orphan()) return false;
  tid_ = tid;
  return true;
}

bool ThreadBuffer::note_flush() {
  if (warm_ || orphaned.load(std::memory_order_acquire)) return warm_;
  if (++live_flushes_ >= 2) {
    populate(slots_, bytes());
    warm_ = true;
  }
  return warm_;
}

size_t ThreadBuffer::resident_bytes() const {
  size_t page = size_t(sysconf(_SC_PAGESIZE)), bytes = this->bytes();
  std::vector<unsigned char> in_core((bytes + page - 1) / page);
  if (mincore(slots_, bytes, in_core.data()) != 0) return 0;
  size_t pages = 0;
  for (unsigned char c : in_core) pages += c & 1;
  return pages * page;
}

ThreadBuffer* BufferRegistry::acquire(uint32_t capacity_pow2, uint32_t tid) {
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  int n = count_.load(std::memory_order_relaxed);
  for (int i = 0; i < n; ++i) {
    ThreadBuffer* b = buffers_[i].load(std::memory_order_relaxed);
    // An orphan is adoptable once the writer has drained it.
    if (b->orphaned.load(std::memory_order_acquire) && b->adopt(tid)) return b;
  }
  if (n == kMaxThreads) return nullptr;
  ThreadBuffer* b = ThreadBuffer::create(capacity_pow2, tid);
  if (!b) return nullptr;
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
