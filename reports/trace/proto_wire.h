// The protobuf wire format, as much of it as the Perfetto trace needs:
// varints, tags, and length-delimited fields (strings, bytes, nested
// messages), appended to a byte vector. No libprotobuf: the message layouts
// live with their one user (trace_perfetto.cpp), field numbers from the
// published .proto files.
// https://protobuf.dev/programming-guides/encoding/
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <utility>
#include <vector>

namespace ddpscope::reports::proto {

enum WireType : uint8_t { kVarint = 0, kLengthDelimited = 2 };

// An append-only byte buffer. Neither std::string nor std::vector: each
// kept its push_back out of line, a call per byte, which perf showed as the
// trace writer's largest cost (std::vector's was 8 % of `report --trace`).
// Here the one check per byte is inline, and growing is the rare call.
class Bytes {
 public:
  Bytes() = default;
  Bytes(Bytes&& o) noexcept : buf_(std::move(o.buf_)), used_(std::exchange(o.used_, 0)) {}
  Bytes& operator=(Bytes&& o) noexcept {
    buf_ = std::move(o.buf_);
    used_ = std::exchange(o.used_, 0);
    return *this;
  }
  Bytes(const Bytes&) = delete;
  Bytes& operator=(const Bytes&) = delete;

  size_t size() const { return used_; }
  bool empty() const { return used_ == 0; }
  size_t capacity() const { return buf_.size(); }
  char* data() { return buf_.data(); }
  const char* data() const { return buf_.data(); }
  char& operator[](size_t i) { return buf_[i]; }
  void clear() { used_ = 0; }
  void reserve(size_t n) {
    if (n > buf_.size()) buf_.resize(n);
  }
  // Room for n more bytes (growing as push_back does).
  void make_room(size_t n) {
    if (buf_.size() - used_ < n) grow(n);
  }
  // size() becomes n; bytes past the old size are unspecified (to be written).
  void resize(size_t n) {
    reserve(n);
    used_ = n;
  }
  void push_back(char c) {
    if (used_ == buf_.size()) grow(1);
    buf_[used_++] = c;
  }
  void append(const char* p, size_t n) {
    if (buf_.size() - used_ < n) grow(n);
    std::memcpy(buf_.data() + used_, p, n);
    used_ += n;
  }
  // Bytes p..p+n put at `pos`, what was there moved up.
  void insert(size_t pos, const char* p, size_t n) {
    if (buf_.size() - used_ < n) grow(n);
    std::memmove(buf_.data() + pos + n, buf_.data() + pos, used_ - pos);
    std::memcpy(buf_.data() + pos, p, n);
    used_ += n;
  }
  void swap(Bytes& o) noexcept {
    buf_.swap(o.buf_);
    std::swap(used_, o.used_);
  }

 private:
  void grow(size_t n) { buf_.resize(std::max(buf_.size() * 2, used_ + n)); }

  std::vector<char> buf_;  // its size is the capacity
  size_t used_ = 0;
};

// v's varint at `out` (room for 10 bytes): 7 bits a byte, low bits first,
// the high bit saying "more". Returns its length.
inline size_t encode_varint(char* out, uint64_t v) {
  size_t n = 0;
  for (; v >= 0x80; v >>= 7) out[n++] = char(uint8_t(v) | 0x80);
  out[n++] = char(v);
  return n;
}

inline void put_varint(Bytes& out, uint64_t v) {
  if (v < 0x80) {  // most tags, flags, iids and small values
    out.push_back(char(v));
    return;
  }
  char bytes[10];
  out.append(bytes, encode_varint(bytes, v));
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
  out.append(bytes.data(), bytes.size());
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
    char prefix[10];
    const size_t n = encode_varint(prefix, length);
    out_[start_ - 1] = prefix[0];
    out_.insert(start_, prefix + 1, n - 1);
  }
  Message(const Message&) = delete;
  Message& operator=(const Message&) = delete;

 private:
  Bytes& out_;
  size_t start_;
};

// The same fields written into room reserved ahead, for the hot path (a
// trace's millions of packets). Bytes' own writes go through its pointer and
// size, which a char written could alias, so the compiler reloads them after
// every byte; a cursor's pointer stays in a register and checks nothing.
// The caller reserves enough: kMessageRoom per message besides its fields'
// worst case (kVarintRoom per varint, a string's length beside it).
class Cursor {
 public:
  static constexpr size_t kVarintRoom = 10;
  static constexpr size_t kMessageRoom = 2 * kVarintRoom;  // tag and length

  Cursor(Bytes& out, size_t most) : out_(out) {
    out.make_room(most);
    base_ = out.data();
    p_ = base_ + out.size();
  }
  ~Cursor() { out_.resize(size_t(p_ - base_)); }  // what was written stays
  Cursor(const Cursor&) = delete;
  Cursor& operator=(const Cursor&) = delete;

  // Inlined wherever used: a field's tag is then a constant byte, and the
  // pointer stays in a register. Out of line (as GCC chose for a trace
  // packet's dozen calls), every byte stored went through p_ in memory, which
  // that byte could alias: perf put 47 % of the encoding thread here.
  [[gnu::always_inline]] void varint(uint64_t v) {
    char* p = p_;
    for (; v >= 0x80; v >>= 7) *p++ = char(uint8_t(v) | 0x80);
    *p++ = char(v);
    p_ = p;
  }
  [[gnu::always_inline]] void uint(uint32_t field, uint64_t v) {
    varint((uint64_t(field) << 3) | kVarint);
    varint(v);
  }
  [[gnu::always_inline]] void sint(uint32_t field, int64_t v) {
    uint(field, uint64_t(v));  // as put_int
  }
  void bytes(uint32_t field, std::string_view b) {
    varint((uint64_t(field) << 3) | kLengthDelimited);
    varint(b.size());
    std::memcpy(p_, b.data(), b.size());
    p_ += b.size();
  }
  // A nested message: open() before its fields, close() with what it gave
  // after them. One byte is kept for the length, as Message does.
  [[gnu::always_inline]] size_t open(uint32_t field) {
    varint((uint64_t(field) << 3) | kLengthDelimited);
    *p_++ = 0;
    return size_t(p_ - base_);
  }
  [[gnu::always_inline]] void close(size_t start) {
    size_t length = size_t(p_ - base_) - start;
    if (length < 0x80) {
      base_[start - 1] = char(length);
      return;
    }
    char prefix[kVarintRoom];
    const size_t n = encode_varint(prefix, length);
    std::memmove(base_ + start + n - 1, base_ + start, length);
    std::memcpy(base_ + start - 1, prefix, n);
    p_ += n - 1;
  }

 private:
  Bytes& out_;
  char* base_;
  char* p_;
};

}  // namespace ddpscope::reports::proto
