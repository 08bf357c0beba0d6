// Which trace format `--trace F` writes (renderer.h: trace_format_for), on
// the real renderer at the size boundary; and the protobuf wire encoding the
// Perfetto trace is made of, against the encodings protobuf's documentation
// gives, written both ways (Bytes' functions and the hot path's Cursor); and
// the zlib streams the packets are deflated into. (The trace itself is
// decoded by Google's protobuf in test_perfetto_trace.py.)
#include <dlfcn.h>
#include <zlib.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <random>

#include "profiler/store/reader.h"
#include "reports/renderer.h"
#include "reports/trace/proto_wire.h"
#include "reports/trace/zlib_deflate.h"
#include "tests/reports/fixtures.h"
#include "tests/support/subprocess.h"

using namespace ddpscope;
using namespace ddpscope::testing;
using reports::TraceFormat;
namespace fs = std::filesystem;

namespace {

std::string bytes(std::initializer_list<int> values) {
  std::string out;
  for (int v : values) out.push_back(char(v));
  return out;
}

std::string text(const reports::proto::Bytes& b) { return std::string(b.data(), b.size()); }

}  // namespace

TEST_CASE("Trace format: the file name decides, else the size of the run") {
  using reports::trace_format_for;
  constexpr int64_t kMax = reports::kJsonTraceMaxRows;
  for (const char* name : {"run.pftrace", "dir.json/run.perfetto-trace", "x.pb", "X.PFTRACE"}) {
    CHECK(trace_format_for(name, 0) == TraceFormat::perfetto);
    CHECK(trace_format_for(name, kMax + 1) == TraceFormat::perfetto);
  }
  for (const char* name : {"run.json", "Run.JSON", "/a.pftrace/b.json"}) {
    CHECK(trace_format_for(name, 0) == TraceFormat::json);
    CHECK(trace_format_for(name, 100 * kMax) == TraceFormat::json);
  }
  for (const char* name : {"run.trace", "trace", "run.json.txt", "run.pb.gz"}) {
    CHECK(trace_format_for(name, kMax) == TraceFormat::json);
    CHECK(trace_format_for(name, kMax + 1) == TraceFormat::perfetto);
  }
}

// The renderer's boundary moved down to 2,000 rows (kJsonTraceMaxRows, a
// million, is trace_format_for's, checked above): the renderer counts the
// run's rows and decides by them.
TEST_CASE("Trace format: a run just over the limit gets the protobuf, at it the JSON") {
  constexpr int64_t kMax = 2000;
  std::string dir = temp_dir("trace-format");
  SampleRun db = make_run_db(dir);
  analysis::RunAnalysis run;
  auto fill_to = [&](int64_t rows) {
    store::Connection conn(db.path, store::Connection::Mode::read_write);
    store::RunReader reader(db.path);
    int64_t have = 0;
    for (const char* t : {"collectives", "kernels", "ranges", "syncs"}) have += reader.count(t);
    conn.exec("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < " +
              std::to_string(rows - have) +
              ") INSERT INTO syncs SELECT 1, 5, 'cudaDeviceSynchronize', 0, "
              "1700000000002000000 + 10 * i, 1700000000002000005 + 10 * i FROM n");
  };
  auto render = [&](const std::string& name, std::string* note) {
    store::RunReader reader(db.path);
    auto r = reports::make_trace_renderer_up_to(kMax);
    r->write({run, reader}, dir + "/" + name);
    *note = r->note();
    return read_text(dir + "/" + name);
  };
  std::string note;
  fill_to(kMax);
  CHECK(render("at.trace", &note).front() == '{');
  CHECK(note == "Chrome trace-event JSON");
  fill_to(kMax + 1);
  std::string proto = render("over.trace", &note);
  CHECK(proto.front() == '\x0a');  // Trace.packet: field 1, length-delimited
  CHECK(note == "Perfetto protobuf");
  CHECK(render("over.json", &note).front() == '{');  // the name still decides
  CHECK(proto.size() * 4 < fs::file_size(dir + "/over.json"));
  fs::remove_all(dir);
}

TEST_CASE("Protobuf wire: varints, tags and length-delimited fields") {
  using namespace reports::proto;
  Bytes out;
  for (uint64_t v : {0ull, 1ull, 127ull}) put_varint(out, v);
  CHECK(text(out) == bytes({0, 1, 0x7f}));
  out.clear();
  put_varint(out, 128);
  put_varint(out, 300);
  CHECK(text(out) == bytes({0x80, 0x01, 0xac, 0x02}));
  out.clear();
  put_varint(out, UINT64_MAX);
  CHECK(text(out) == bytes({0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}));
  out.clear();
  put_int(out, 1, -1);  // int64 -1: ten bytes
  CHECK(text(out) == bytes({0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}));
  out.clear();
  put_uint(out, 1, 150);  // the documentation's example message
  CHECK(text(out) == bytes({0x08, 0x96, 0x01}));
  out.clear();
  put_bytes(out, 2, "testing");
  CHECK(text(out) == bytes({0x12, 0x07}) + "testing");
  out.clear();
  put_uint(out, 60, 1);  // a field number past 15 takes a two-byte tag
  CHECK(text(out) == bytes({0xe0, 0x03, 0x01}));
}

TEST_CASE("Protobuf wire: nested messages of any length") {
  using namespace reports::proto;
  Bytes out;
  out.push_back('x');
  {
    Message outer(out, 3);
    put_uint(out, 1, 150);
    Message inner(out, 4);
  }
  CHECK(text(out) == "x" + bytes({0x1a, 0x05, 0x08, 0x96, 0x01, 0x22, 0x00}));
  std::string big(200, 'a');
  out.clear();
  {
    Message m(out, 1);
    put_bytes(out, 2, big);  // 203 bytes: the length takes two bytes
  }
  CHECK(text(out) == bytes({0x0a, 0xcb, 0x01, 0x12, 0xc8, 0x01}) + big);
}

// Every kind of field the Perfetto writer puts through a Cursor, beside the
// same through Bytes' functions and Message: the bytes must be the same,
// for messages whose length takes one, two and three bytes.
TEST_CASE("Protobuf wire: a Cursor writes what Bytes and Message write") {
  using namespace reports::proto;
  for (size_t inner : {0, 5, 120, 127, 128, 300, 16383, 16384, 70000}) {
    const std::string text_field(inner, 'q');
    Bytes slow, fast;
    slow.push_back('x');
    fast.push_back('x');
    {
      Message outer(slow, 1);
      put_uint(slow, 8, UINT64_MAX);
      put_int(slow, 12, -3);
      {
        Message nested(slow, 60);
        put_bytes(slow, 2, text_field);
      }
      put_uint(slow, 13, 0);
    }
    {
      Cursor c(fast, 4 * Cursor::kMessageRoom + 8 * Cursor::kVarintRoom + inner);
      size_t outer = c.open(1);
      c.uint(8, UINT64_MAX);
      c.sint(12, -3);
      size_t nested = c.open(60);
      c.bytes(2, text_field);
      c.close(nested);
      c.uint(13, 0);
      c.close(outer);
    }
    INFO("text of " << inner << " bytes");
    CHECK(text(fast) == text(slow));
  }
}

namespace {

// `deflated`, a zlib stream, inflated by zlib itself.
std::string inflated(const reports::proto::Bytes& deflated, size_t size) {
  std::string out(size + 1, '\0');
  uLongf n = out.size();
  int rc = uncompress(reinterpret_cast<Bytef*>(out.data()), &n,
                      reinterpret_cast<const Bytef*>(deflated.data()), uLong(deflated.size()));
  REQUIRE(rc == Z_OK);
  out.resize(n);
  return out;
}

}  // namespace

// Every way of deflating (ISA-L where built with it, libdeflate where it
// loads, zlib's own) gives zlib streams that zlib inflates to the packets
// given: empty, small, larger than a trace's chunk, or random bytes. Each
// library is used exactly where it is at hand.
TEST_CASE("Trace deflating: zlib streams from ISA-L, libdeflate or zlib, the same bytes back") {
  using namespace reports::proto;
  using Library = ZlibDeflate::Library;
  std::mt19937_64 random(7);
  std::string packets, noise;
  for (int i = 0; i < 300000; ++i)  // varint-like bytes, some runs
    packets.push_back(char(random() % 7 == 0 ? 0x80 | (random() & 0x7f) : random() % 24));
  for (int i = 0; i < 200000; ++i) noise.push_back(char(random()));
  const bool has_libdeflate = dlopen("libdeflate.so.0", RTLD_NOW | RTLD_LOCAL) != nullptr;
  const Library fastest = ZlibDeflate::built_with_isal() ? Library::isal
                          : has_libdeflate               ? Library::libdeflate
                                                         : Library::zlib;
  CHECK(ZlibDeflate().used() == fastest);
  CHECK(ZlibDeflate(Library::libdeflate).used() ==
        (has_libdeflate ? Library::libdeflate : Library::zlib));
  CHECK(ZlibDeflate(Library::zlib).used() == Library::zlib);
  if (std::getenv("CI")) CHECK(ZlibDeflate::built_with_isal());  // scripts/setup.sh installs it
  for (Library first : {Library::isal, Library::libdeflate, Library::zlib}) {
    ZlibDeflate zlib(first);
    Bytes out;
    for (size_t size : {size_t(0), size_t(1), size_t(1000), packets.size()}) {
      INFO(zlib.library() << ", " << size << " bytes");
      zlib.deflate({packets.data(), size}, out);
      CHECK(out.size() < size + 64);
      CHECK(inflated(out, size) == packets.substr(0, size));
    }
    INFO(zlib.library() << ", random bytes");
    zlib.deflate(noise, out);
    CHECK(inflated(out, noise.size()) == noise);
  }
}
