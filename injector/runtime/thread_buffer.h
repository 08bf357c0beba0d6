// Per-thread single-producer/single-consumer event rings, Tracy-style: the
// owning thread reserves a slot, fills it, and publishes it with one release
// store; the writer thread drains with acquire loads. No lock, no allocation,
// no syscall on the producer side.
//
// Memory: a ring is mapped whole but faulted in lazily. A new thread's ring
// has only its first kPrefaultBytes in memory; the writer faults in the rest
// (note_flush(), without touching the contents) once the thread has lived
// through two flushes; a ring whose thread ended is trimmed back to the
// kPrefaultBytes its next owner will write first. A thread that makes a few
// calls and ends costs tens of KiB, not the whole ring: threads that come and
// go faster than the writer can recycle their rings would otherwise hold a
// ring each (7 MiB by default), and an idle ring would stay as warm as its
// last owner left it.
//
// Overflow policy: kDropNewest, with a reserve for communication. When a ring
// is full the new event is dropped and counted (processes.dropped_events); the
// app is never blocked by the profiler. Events of other kinds (NVTX ranges,
// CUDA waits, NCCL plugin steps) may fill a ring only up to capacity minus a
// quarter: the last quarter takes communication events alone (collectives,
// communicators), so a flood of cudaStreamWaitEvent cannot crowd them out.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "injector/runtime/event.h"

namespace ddpscope::inject {

enum class OverflowPolicy { kDropNewest };
constexpr OverflowPolicy kOverflowPolicy = OverflowPolicy::kDropNewest;

// Which budget an event draws on: communication may use the whole ring, the
// rest all but the reserve.
enum class EventClass : uint8_t { other, comm };

class ThreadBuffer {
 public:
  // In memory from the start: a short-lived thread's events, without a page
  // fault on its hot path.
  static constexpr size_t kPrefaultBytes = 64 << 10;

  // Throws std::bad_alloc when the ring cannot be mapped (tests own theirs).
  ThreadBuffer(uint32_t capacity_pow2, uint32_t tid);
  // The runtime's way: null when the system refuses the ring's memory, so a
  // hooked call never sees an exception (its thread goes unrecorded).
  static ThreadBuffer* create(uint32_t capacity_pow2, uint32_t tid);
  ~ThreadBuffer();
  ThreadBuffer(const ThreadBuffer&) = delete;
  ThreadBuffer& operator=(const ThreadBuffer&) = delete;

  // Producer side (owning thread only).
  Event* reserve(EventClass c = EventClass::other) {
    uint64_t h = head_.load(std::memory_order_relaxed);
    uint64_t limit = c == EventClass::comm ? capacity_ : other_limit_;
    if (h - cached_tail_ >= limit) {
      cached_tail_ = tail_.load(std::memory_order_acquire);
      if (h - cached_tail_ >= limit) {
        std::atomic<uint64_t>& d = c == EventClass::comm ? dropped_comm_ : dropped_;
        d.store(d.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
        return nullptr;
      }
    }
    return &slots_[h & mask_];
  }
  void publish() {
    head_.store(head_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
  }

  // Consumer side (writer thread only): calls fn for each published event.
  template <typename Fn>
  uint64_t drain(Fn&& fn) {
    bool ended = orphaned.load(std::memory_order_acquire);
    uint64_t t = tail_.load(std::memory_order_relaxed);
    uint64_t h = head_.load(std::memory_order_acquire);
    for (uint64_t i = t; i < h; ++i) fn(slots_[i & mask_]);
    if (ended)
      trim_ended(h, h != t);
    else
      trimmed_ = false;
    tail_.store(h, std::memory_order_release);
    return h - t;
  }

  // Events dropped, all kinds; and of those, communication events.
  uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed) + dropped_comm(); }
  uint64_t dropped_comm() const { return dropped_comm_.load(std::memory_order_relaxed); }
  uint32_t tid() const { return tid_; }
  // Acquire on the tail too: a new owner adopting a drained ring must see
  // what the writer did to its memory before publishing that tail (trim).
  bool empty() const {
    return head_.load(std::memory_order_acquire) == tail_.load(std::memory_order_acquire);
  }

  // Writer thread only: called at each flush; the second time it finds the
  // ring's thread alive, the whole ring is faulted in, so a long-lived thread
  // takes no page fault on its hot path from then on. True once warm.
  bool note_flush();
  bool warm() const { return warm_; }
  // Bytes of the ring in memory now (mincore): for tests and diagnostics.
  size_t resident_bytes() const;

  // Thread exit hands the buffer back; the writer drains it and a new thread
  // may adopt it, so thread churn does not grow memory.
  std::atomic<bool> orphaned{false};
  // A new owner's claim on a drained orphan (BufferRegistry, under its
  // mutex): it may lose to the writer, which claims an orphan to trim it.
  bool adopt(uint32_t tid);

 private:
  ThreadBuffer(uint32_t capacity_pow2, uint32_t tid, Event* slots);

  alignas(64) std::atomic<uint64_t> head_{0};
  uint64_t cached_tail_ = 0;
  std::atomic<uint64_t> dropped_{0}, dropped_comm_{0};
  uint32_t tid_;
  alignas(64) std::atomic<uint64_t> tail_{0};
  const uint64_t capacity_;
  const uint64_t other_limit_;  // capacity_ less the communication reserve
  const uint64_t mask_;
  Event* const slots_;  // mapped; a buffer lives as long as the process, tests free theirs
  // A cold ring whose thread ended, drained up to `head`: its pages go back to
  // the system but the kPrefaultBytes its next owner writes first (from
  // `head` on). Each short-lived owner would otherwise touch pages further
  // round the ring, and a recycled ring end up in memory whole.
  void trim(uint64_t head);
  // The writer's part in a ring whose thread ended, once drained up to `head`:
  // trimmed whether warm or cold, so a ring between owners holds only
  // kPrefaultBytes. With events just drained (`drained`) nobody can adopt it
  // before the tail is published; without, it may be adoptable already, so
  // the writer first claims it as an owner would.
  void trim_ended(uint64_t head, bool drained);
  // Takes an ended thread's ring off the orphans (false: someone else did),
  // as an adopter or as the writer about to trim it.
  bool claim_orphan();
  size_t bytes() const { return size_t(capacity_) * sizeof(Event); }  // the mapping's size
  int live_flushes_ = 0;                                              // writer thread only
  bool warm_ = false;                                                 // writer thread only
  bool trimmed_ = false;  // writer thread only: since its thread ended
};

// Every buffer ever handed out, in a fixed table the writer walks without locks.
class BufferRegistry {
 public:
  static constexpr int kMaxThreads = 4096;
  BufferRegistry() = default;
  // The runtime's registry is never destroyed (threads may write during exit,
  // capture.cpp); one a test owns frees its buffers.
  ~BufferRegistry();
  BufferRegistry(const BufferRegistry&) = delete;
  BufferRegistry& operator=(const BufferRegistry&) = delete;
  // The calling thread's buffer: adopted from an orphan or newly made (once per
  // thread, under a mutex; never on the hot path). Null when the table is full
  // or the system has no memory for a new ring.
  ThreadBuffer* acquire(uint32_t capacity_pow2, uint32_t tid);
  int size() const { return count_.load(std::memory_order_acquire); }
  ThreadBuffer* at(int i) const { return buffers_[i].load(std::memory_order_acquire); }
  uint64_t dropped() const;
  uint64_t dropped_comm() const;

 private:
  std::atomic<ThreadBuffer*> buffers_[kMaxThreads] = {};
  std::atomic<int> count_{0};
};

}  // namespace ddpscope::inject
