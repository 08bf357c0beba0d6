#include "reports/trace/zlib_deflate.h"

#include <dlfcn.h>
#include <zlib.h>

#include <stdexcept>
#include <string>

namespace ddpscope::reports::proto {
namespace {

// Level 1 of 9 for both: on the benchmark's trace zlib's default level 6
// deflated two to three times slower for 6% of the JSON's size against 7.5%.
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

ZlibDeflate::ZlibDeflate(bool try_libdeflate) {
  if (try_libdeflate && libdeflate().loaded()) compressor_ = libdeflate().alloc_compressor(kLevel);
}

ZlibDeflate::~ZlibDeflate() {
  if (compressor_) libdeflate().free_compressor(compressor_);
}

void ZlibDeflate::deflate(std::string_view in, Bytes& out) {
  if (compressor_) {
    out.resize(libdeflate().zlib_compress_bound(compressor_, in.size()));
    size_t size =
        libdeflate().zlib_compress(compressor_, in.data(), in.size(), out.data(), out.size());
    if (size == 0) throw std::runtime_error("libdeflate could not deflate the trace");
    out.resize(size);
    return;
  }
  uLongf size = compressBound(uLong(in.size()));
  out.resize(size);
  int rc = compress2(reinterpret_cast<Bytef*>(out.data()), &size,
                     reinterpret_cast<const Bytef*>(in.data()), uLong(in.size()), kLevel);
  if (rc != Z_OK)
    throw std::runtime_error("zlib could not deflate the trace (" + std::to_string(rc) + ")");
  out.resize(size);
}

}  // namespace ddpscope::reports::proto
