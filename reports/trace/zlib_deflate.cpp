#include "reports/trace/zlib_deflate.h"

#include <dlfcn.h>
#include <zlib.h>

#include <stdexcept>
#include <string>
#include <vector>

#ifdef DDPSCOPE_WITH_ISAL
#include <isa-l/igzip_lib.h>
#endif

namespace ddpscope::reports::proto {
namespace {

// Level 1 of 9 for zlib and libdeflate, of 0 to 3 for igzip: on the
// benchmark's trace zlib's default level 6 deflated two to three times
// slower for 6% of the JSON's size against 7.5%.
constexpr int kLevel = 1;

// libdeflate's API (libdeflate.h; unchanged since its 1.0), bound once. No
// header needed at build time: the library is optional.
struct Libdeflate {
  void* (*alloc_compressor)(int level) = nullptr;
  size_t (*zlib_compress)(void* c, const void* in, size_t in_size, void* out,
                          size_t out_avail) = nullptr;
  size_t (*zlib_compress_bound)(void* c, size_t in_size) = nullptr;
  void (*free_compressor)(void* c) = nullptr;

  Libdeflate() {
    void* h = dlopen("libdeflate.so.0", RTLD_NOW | RTLD_LOCAL);
    if (!h) return;
    bind(h, alloc_compressor, "libdeflate_alloc_compressor");
    bind(h, zlib_compress, "libdeflate_zlib_compress");
    bind(h, zlib_compress_bound, "libdeflate_zlib_compress_bound");
    bind(h, free_compressor, "libdeflate_free_compressor");
  }
  bool loaded() const {
    return alloc_compressor && zlib_compress && zlib_compress_bound && free_compressor;
  }
  template <typename Fn>
  static void bind(void* h, Fn& fn, const char* name) {
    fn = reinterpret_cast<Fn>(dlsym(h, name));
  }
};

const Libdeflate& libdeflate() {
  static const Libdeflate lib;
  return lib;
}

}  // namespace

#ifdef DDPSCOPE_WITH_ISAL
struct ZlibDeflate::Isal {
  isal_zstream stream;
  std::vector<uint8_t> level_buf = std::vector<uint8_t>(ISAL_DEF_LVL1_DEFAULT);
};
bool ZlibDeflate::built_with_isal() { return true; }
#else
struct ZlibDeflate::Isal {};
bool ZlibDeflate::built_with_isal() { return false; }
#endif

ZlibDeflate::ZlibDeflate(Library first) {
  if (first == Library::isal && built_with_isal()) {
    isal_ = std::make_unique<Isal>();
    used_ = Library::isal;
  } else if (first != Library::zlib && libdeflate().loaded()) {
    libdeflate_ = libdeflate().alloc_compressor(kLevel);
    if (libdeflate_) used_ = Library::libdeflate;
  }
}

ZlibDeflate::~ZlibDeflate() {
  if (libdeflate_) libdeflate().free_compressor(libdeflate_);
}

const char* ZlibDeflate::library() const {
  switch (used_) {
    case Library::isal:
      return "isa-l";
    case Library::libdeflate:
      return "libdeflate";
    case Library::zlib:
      break;
  }
  return "zlib";
}

void ZlibDeflate::deflate(std::string_view in, Bytes& out) {
  if (used_ == Library::isal) return deflate_isal(in, out);
  if (used_ == Library::zlib) return deflate_zlib(in, out);
  out.resize(libdeflate().zlib_compress_bound(libdeflate_, in.size()));
  size_t size =
      libdeflate().zlib_compress(libdeflate_, in.data(), in.size(), out.data(), out.size());
  if (size == 0) throw std::runtime_error("libdeflate could not deflate the trace");
  out.resize(size);
}

// In one call (igzip's stateless deflate, for inputs under 4 GiB: a trace's
// chunks are 1 MiB). Its output must fit the room given; bytes that do not
// compress (never a trace's packets) take zlib's way instead.
void ZlibDeflate::deflate_isal(std::string_view in, Bytes& out) {
#ifdef DDPSCOPE_WITH_ISAL
  if (in.size() >= (size_t(1) << 31)) return deflate_zlib(in, out);
  out.resize(in.size() + in.size() / 16 + 1024);
  isal_zstream& s = isal_->stream;
  isal_deflate_stateless_init(&s);
  s.level = kLevel;
  s.level_buf = isal_->level_buf.data();
  s.level_buf_size = uint32_t(isal_->level_buf.size());
  s.gzip_flag = IGZIP_ZLIB;
  s.next_in = reinterpret_cast<uint8_t*>(const_cast<char*>(in.data()));
  s.avail_in = uint32_t(in.size());
  s.next_out = reinterpret_cast<uint8_t*>(out.data());
  s.avail_out = uint32_t(out.size());
  s.end_of_stream = 1;
  s.flush = NO_FLUSH;
  const int rc = isal_deflate_stateless(&s);
  if (rc == STATELESS_OVERFLOW) return deflate_zlib(in, out);
  if (rc != COMP_OK)
    throw std::runtime_error("ISA-L could not deflate the trace (" + std::to_string(rc) + ")");
  out.resize(s.total_out);
#else
  deflate_zlib(in, out);
#endif
}

void ZlibDeflate::deflate_zlib(std::string_view in, Bytes& out) {
  uLongf size = compressBound(uLong(in.size()));
  out.resize(size);
  int rc = compress2(reinterpret_cast<Bytef*>(out.data()), &size,
                     reinterpret_cast<const Bytef*>(in.data()), uLong(in.size()), kLevel);
  if (rc != Z_OK)
    throw std::runtime_error("zlib could not deflate the trace (" + std::to_string(rc) + ")");
  out.resize(size);
}

}  // namespace ddpscope::reports::proto
