// The protobuf wire format, as much of it as the Perfetto trace needs:
// varints, tags, and length-delimited fields (strings, bytes, nested
// messages), appended to a byte vector. No libprotobuf: the message layouts
// live with their one user (trace_perfetto.cpp), field numbers from the
// published .proto files.
// https://protobuf.dev/programming-guides/encoding/
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace ddpscope::reports::proto {

enum WireType : uint8_t { kVarint = 0, kLengthDelimited = 2 };

// A vector, not a std::string: libstdc++ keeps std::string's push_back out of
// line (an extern template), a call per byte, which perf showed as the trace
// writer's largest cost.
using Bytes = std::vector<char>;

inline void put_varint(Bytes& out, uint64_t v) {
  if (v < 0x80) {  // most tags, flags, iids and small values
    out.push_back(char(v));
    return;
  }
  char bytes[10];  // 7 bits a byte, low bits first; the high bit says "more"
  size_t n = 0;
  for (; v >= 0x80; v >>= 7) bytes[n++] = char(uint8_t(v) | 0x80);
  bytes[n++] = char(v);
  out.insert(out.end(), bytes, bytes + n);
}

inline void put_tag(Bytes& out, uint32_t field, WireType type) {
  put_varint(out, (uint64_t(field) << 3) | type);
}

// uint32/uint64/int32/int64/enum/bool fields: a negative int64 is its two's
// complement (ten bytes), as protobuf encodes int64.
inline void put_uint(Bytes& out, uint32_t field, uint64_t v) {
  put_tag(out, field, kVarint);
  put_varint(out, v);
}
inline void put_int(Bytes& out, uint32_t field, int64_t v) { put_uint(out, field, uint64_t(v)); }

// string and bytes fields, and a message already encoded.
inline void put_bytes(Bytes& out, uint32_t field, std::string_view bytes) {
  put_tag(out, field, kLengthDelimited);
  put_varint(out, bytes.size());
  out.insert(out.end(), bytes.begin(), bytes.end());
}

// A nested message written in place: the scope's contents are the message's
// fields, and its length is filled in when the scope ends. One byte is kept
// for the length, which covers messages under 128 bytes (nearly all of ours);
// a longer one moves its contents up by the extra length bytes.
class Message {
 public:
  Message(Bytes& out, uint32_t field) : out_(out) {
    put_tag(out_, field, kLengthDelimited);
    out_.push_back(0);
    start_ = out_.size();
  }
  ~Message() {
    size_t length = out_.size() - start_;
    if (length < 0x80) {
      out_[start_ - 1] = char(length);
      return;
    }
    Bytes prefix;
    put_varint(prefix, length);
    out_[start_ - 1] = prefix[0];
    out_.insert(out_.begin() + ptrdiff_t(start_), prefix.begin() + 1, prefix.end());
  }
  Message(const Message&) = delete;
  Message& operator=(const Message&) = delete;

 private:
  Bytes& out_;
  size_t start_;
};

}  // namespace ddpscope::reports::proto
