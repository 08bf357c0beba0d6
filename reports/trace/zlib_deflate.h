// Bytes deflated in zlib's format (RFC 1950), which Perfetto's
// TracePacket.compressed_packets holds, by the fastest library at hand:
//  - ISA-L's igzip, where the build found it (Debian's and Ubuntu's
//    libisal-dev; scripts/setup.sh installs it);
//  - else libdeflate, where the system has libdeflate.so.0 (loaded at run
//    time: Debian's and Ubuntu's libdeflate0, which libtiff brings);
//  - else zlib's own compress2.
// All at level 1. On the benchmark's 403 MB of packets igzip took 0.55 s
// (83 MB out), libdeflate 1.22 s (73 MB), zlib about twice libdeflate's time
// (docs/performance.md): deflating is a third of the trace's work.
#pragma once

#include <memory>
#include <string_view>

#include "reports/trace/proto_wire.h"

namespace ddpscope::reports::proto {

class ZlibDeflate {
 public:
  enum class Library { isal, libdeflate, zlib };  // fastest first

  // The first of `first` and the libraries after it that this build and
  // system have (tests ask for each in turn; zlib is always there).
  explicit ZlibDeflate(Library first = Library::isal);
  ~ZlibDeflate();
  ZlibDeflate(const ZlibDeflate&) = delete;
  ZlibDeflate& operator=(const ZlibDeflate&) = delete;

  // `in` deflated into `out` (its contents replaced). Throws
  // std::runtime_error where the library fails.
  void deflate(std::string_view in, Bytes& out);
  Library used() const { return used_; }
  const char* library() const;  // "isa-l", "libdeflate" or "zlib"
  static bool built_with_isal();

 private:
  struct Isal;  // igzip's stream and its level's buffer
  void deflate_zlib(std::string_view in, Bytes& out);
  void deflate_isal(std::string_view in, Bytes& out);

  Library used_ = Library::zlib;
  std::unique_ptr<Isal> isal_;
  void* libdeflate_ = nullptr;  // libdeflate's compressor
};

}  // namespace ddpscope::reports::proto
