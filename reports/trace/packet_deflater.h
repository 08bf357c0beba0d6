// Deflates a Perfetto trace's packets chunk by chunk and writes each chunk as
// one TracePacket of `compressed_packets` (field 50 of trace_packet.proto: the
// zlib stream of a serialized Trace, as Perfetto's tracing service writes it).
// The deflating runs on a worker thread while the caller encodes the next
// chunk: on the benchmark's run it would otherwise be a third of the trace's
// time. Chunks are written in the order given.
#pragma once

#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <ostream>
#include <thread>

#include "reports/trace/proto_wire.h"

namespace ddpscope::reports::proto {

class PacketDeflater {
 public:
  explicit PacketDeflater(std::ostream& os);
  ~PacketDeflater();  // stops the worker; what was not finish()ed is dropped
  PacketDeflater(const PacketDeflater&) = delete;
  PacketDeflater& operator=(const PacketDeflater&) = delete;

  // Takes `packets` (whole Trace.packet fields) and leaves it empty. Waits
  // while two chunks are already queued, so memory stays bounded; rethrows
  // the worker's error (zlib, a failed write) if there was one.
  void push(Bytes& packets);
  // Writes everything pushed, stops the worker; rethrows its error.
  void finish();

 private:
  void work();
  void write(const Bytes& packets, Bytes& deflated);

  static constexpr size_t kMaxQueued = 2;
  std::ostream& os_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Bytes> queue_;
  bool closing_ = false;
  std::exception_ptr error_;
  std::thread worker_;
};

}  // namespace ddpscope::reports::proto
