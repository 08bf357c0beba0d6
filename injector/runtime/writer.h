// The writer thread: every DDPSCOPE_FLUSH_MS it drains every thread's ring,
// turns ticks into nanoseconds, resolves device timers that have completed, and
// commits one transaction to this rank's file. It opens the file lazily, at the
// first flush with something to write, so processes that never communicate
// (launchers, DataLoader workers after exec) leave no file behind.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

namespace ddpscope::inject {

class BufferRegistry;

struct WriterConfig {
  std::string out_dir;
  int flush_ms = 200;
};

// Starts the thread (all signals blocked in it). Called once per process.
void writer_start(const WriterConfig& config, BufferRegistry* buffers);

// Async-signal-safe: asks for a flush now and waits for it (bounded), so a
// SIGTERM'd job keeps what it recorded.
void writer_flush_from_signal();

// Final flush, file closed; returns when done. Idempotent.
void writer_stop();

}  // namespace ddpscope::inject
