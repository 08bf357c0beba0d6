#include "reports/trace/packet_deflater.h"

#include <stdexcept>

#include "reports/trace/proto_wire.h"
#include "reports/trace/zlib_deflate.h"

namespace ddpscope::reports::proto {
namespace {

constexpr uint32_t kTracePacket = 1;         // trace.proto: Trace.packet
constexpr uint32_t kCompressedPackets = 50;  // trace_packet.proto: TracePacket

}  // namespace

PacketDeflater::PacketDeflater(std::ostream& os) : os_(os), worker_([this] { work(); }) {}

PacketDeflater::~PacketDeflater() {
  chunks_.stop();
  if (worker_.joinable()) worker_.join();
}

void PacketDeflater::push(Bytes& packets) {
  size_t capacity = packets.capacity();
  chunks_.push(std::move(packets));  // rethrows the worker's error
  packets.clear();
  packets.reserve(capacity);
}

void PacketDeflater::finish() {
  chunks_.close();
  if (worker_.joinable()) worker_.join();
  if (error_) std::rethrow_exception(error_);
}

void PacketDeflater::work() {
  Bytes packets, deflated;
  try {
    ZlibDeflate zlib;  // the worker's own: libdeflate's state is not shared
    while (chunks_.pop(packets)) write(zlib, packets, deflated);
  } catch (...) {
    error_ = std::current_exception();
    chunks_.stop(error_);
  }
}

// One packet holding the chunk deflated (zlib format, one stream per chunk).
void PacketDeflater::write(ZlibDeflate& zlib, const Bytes& packets, Bytes& deflated) {
  zlib.deflate({packets.data(), packets.size()}, deflated);
  size_t size = deflated.size();
  Bytes field;  // compressed_packets: tag and length
  put_tag(field, kCompressedPackets, kLengthDelimited);
  put_varint(field, size);
  Bytes head;  // the packet around it: tag and length
  put_tag(head, kTracePacket, kLengthDelimited);
  put_varint(head, field.size() + size);
  head.append(field.data(), field.size());
  os_.write(head.data(), std::streamsize(head.size()));
  os_.write(deflated.data(), std::streamsize(size));
  if (!os_) throw std::runtime_error("write failed");
}

}  // namespace ddpscope::reports::proto
