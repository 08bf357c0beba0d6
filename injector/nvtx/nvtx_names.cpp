#include "injector/nvtx/nvtx_names.h"

#include <cstddef>

#include "injector/runtime/name_table.h"

namespace ddpscope::inject::nvtx {
namespace {

// Appends one code point as UTF-8; false when it does not fit.
bool append_utf8(char* out, size_t& n, size_t cap, uint32_t c) {
  if (c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) c = 0xFFFD;  // not a character
  char b[4];
  size_t len;
  if (c < 0x80) {
    b[0] = char(c), len = 1;
  } else if (c < 0x800) {
    b[0] = char(0xC0 | c >> 6), b[1] = char(0x80 | (c & 0x3F)), len = 2;
  } else if (c < 0x10000) {
    b[0] = char(0xE0 | c >> 12), b[1] = char(0x80 | ((c >> 6) & 0x3F));
    b[2] = char(0x80 | (c & 0x3F)), len = 3;
  } else {
    b[0] = char(0xF0 | c >> 18), b[1] = char(0x80 | ((c >> 12) & 0x3F));
    b[2] = char(0x80 | ((c >> 6) & 0x3F)), b[3] = char(0x80 | (c & 0x3F)), len = 4;
  }
  if (n + len > cap) return false;
  for (size_t i = 0; i < len; ++i) out[n++] = b[i];
  return true;
}

// The attribute struct grew over NVTX versions: read the message only if the
// caller's struct is large enough to hold it.
constexpr size_t kMessageEnd =
    offsetof(nvtxEventAttributes_t, message) + sizeof(nvtxEventAttributes_t::message);

}  // namespace

uint32_t intern_ascii(const char* s) { return name_table().intern(s); }

uint32_t intern_wide(const wchar_t* s) {
  if (!s) return 0;
  // On the stack, and cut where the name table would cut: no allocation.
  char utf8[NameTable::kMaxLength];
  size_t n = 0;
  for (; *s; ++s)
    if (!append_utf8(utf8, n, sizeof utf8, uint32_t(*s))) break;
  return name_table().intern(std::string_view(utf8, n));
}

uint32_t message_id(const nvtxEventAttributes_t* a) {
  if (!a || a->size < kMessageEnd) return 0;
  switch (a->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII:
      return intern_ascii(a->message.ascii);
    case NVTX_MESSAGE_TYPE_UNICODE:
      return intern_wide(a->message.unicode);
    case NVTX_MESSAGE_TYPE_REGISTERED:
      return string_id(a->message.registered);
    default:
      return 0;  // unknown or newer message types (e.g. payload-only) carry no name we read
  }
}

}  // namespace ddpscope::inject::nvtx
