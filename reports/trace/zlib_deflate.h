// Bytes deflated in zlib's format (RFC 1950), which Perfetto's
// TracePacket.compressed_packets holds. libdeflate does it where the system
// has the library (libdeflate.so.0, loaded at run time: Debian's and
// Ubuntu's libdeflate0, which libtiff brings), else zlib's own compress2.
// At level 1 libdeflate took half of zlib's time on the benchmark's 403 MB of
// packets, for a slightly smaller output (docs/performance.md).
#pragma once

#include <string_view>

#include "reports/trace/proto_wire.h"

namespace ddpscope::reports::proto {

class ZlibDeflate {
 public:
  // `try_libdeflate` false: zlib's compress2 whatever the system has (tests
  // check both ways give the same bytes back).
  explicit ZlibDeflate(bool try_libdeflate = true);
  ~ZlibDeflate();
  ZlibDeflate(const ZlibDeflate&) = delete;
  ZlibDeflate& operator=(const ZlibDeflate&) = delete;

  // `in` deflated into `out` (its contents replaced). Throws
  // std::runtime_error where the library fails.
  void deflate(std::string_view in, Bytes& out);
  // "libdeflate" or "zlib": which one deflates.
  const char* library() const { return compressor_ ? "libdeflate" : "zlib"; }

 private:
  void* compressor_ = nullptr;  // libdeflate's, or none
};

}  // namespace ddpscope::reports::proto
