// Items handed from one thread to another through a short queue: the trace's
// rows from the thread that reads them to the writer (event_feed.h), and its
// encoded packets from the writer to the thread that deflates them
// (packet_deflater.h). The queue is bounded, so memory stays a few items
// whatever the run's size, and either side can end the handoff with an
// error that reaches the other.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <mutex>

namespace ddpscope::reports::trace {

template <typename T>
class Handoff {
 public:
  explicit Handoff(size_t max_queued) : max_queued_(max_queued) {}

  // The producer's: waits while the queue is full. False once the consumer
  // stopped; rethrows the error it stopped with.
  bool push(T&& item) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return queue_.size() < max_queued_ || stopped_; });
    if (stopped_) {
      if (why_) std::rethrow_exception(why_);
      return false;
    }
    queue_.push_back(std::move(item));
    lock.unlock();
    changed_.notify_all();
    return true;
  }

  // The producer's: nothing more comes. The consumer takes what is queued,
  // then gets `why` rethrown if there is one (the producer's error, where
  // its next item would have come), else the end.
  void close(std::exception_ptr why = nullptr) {
    {
      std::lock_guard lock(mutex_);
      closed_ = true;
      why_ = why;
    }
    changed_.notify_all();
  }

  // The consumer's: the next item into `out`; false at the end.
  bool pop(T& out) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return !queue_.empty() || closed_ || stopped_; });
    if (queue_.empty() || stopped_) {
      if (why_) std::rethrow_exception(why_);
      return false;
    }
    out = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    changed_.notify_all();  // room for the next item
    return true;
  }

  // Either side's, at once: what is queued is dropped, push() returns false
  // and pop() the end, or both rethrow `why` where there is one (the
  // consumer's error).
  void stop(std::exception_ptr why = nullptr) {
    {
      std::lock_guard lock(mutex_);
      stopped_ = true;
      if (why) why_ = why;
      queue_.clear();
    }
    changed_.notify_all();
  }

 private:
  const size_t max_queued_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<T> queue_;
  bool closed_ = false, stopped_ = false;
  std::exception_ptr why_;
};

}  // namespace ddpscope::reports::trace
