// Deflates a Perfetto trace's packets chunk by chunk and writes each chunk as
// one TracePacket of `compressed_packets` (field 50 of trace_packet.proto: the
// zlib stream of a serialized Trace, as Perfetto's tracing service writes it;
// zlib_deflate.h makes it).
// The deflating runs on a worker thread while the caller encodes the next
// chunk: on the benchmark's run it would otherwise be a third of the trace's
// time. Chunks are written in the order given.
#pragma once

#include <exception>
#include <ostream>
#include <thread>

#include "reports/trace/handoff.h"
#include "reports/trace/proto_wire.h"
#include "reports/trace/zlib_deflate.h"

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
  void write(ZlibDeflate& zlib, const Bytes& packets, Bytes& deflated);

  std::ostream& os_;
  trace::Handoff<Bytes> chunks_{2};
  std::exception_ptr error_;  // the worker's, for finish()
  std::thread worker_;
};

}  // namespace ddpscope::reports::proto
