// NVTX names as a job hands them to the injector: ASCII and wide (UTF-32)
// strings, and event attributes of any size and message type. Every name the
// table stores must be valid UTF-8 where the input was wide, at most
// NameTable::kMaxLength bytes, and an ASCII name must read back as given (cut
// at the limit). Handles must round-trip.
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "injector/nvtx/nvtx_names.h"
#include "injector/runtime/name_table.h"
#include "tests/fuzz/fuzz_support.h"

using namespace ddpscope::inject;
using namespace ddpscope::inject::nvtx;

namespace {

// Well-formed UTF-8 (RFC 3629): no stray continuation bytes, no sequence cut short.
bool valid_utf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = s[i];
    const size_t len = c < 0x80         ? 1
                       : (c >> 5) == 6  ? 2
                       : (c >> 4) == 14 ? 3
                       : (c >> 3) == 30 ? 4
                                        : 0;
    if (len == 0 || i + len > s.size()) return false;
    for (size_t k = 1; k < len; ++k)
      if ((static_cast<unsigned char>(s[i + k]) >> 6) != 2) return false;
    i += len;
  }
  return true;
}

std::string_view stored(uint32_t id) {
  const auto s = name_table().name(id);
  if (s.size() > NameTable::kMaxLength) abort();
  return s;
}

void ascii(const std::string& text) {
  const uint32_t id = intern_ascii(text.c_str());
  if (id == NameTable::kOverflow) return;
  const std::string given = text.substr(0, std::min(strlen(text.c_str()), NameTable::kMaxLength));
  if (stored(id) != given) abort();
}

std::vector<wchar_t> wide_of(const uint8_t* data, size_t size) {
  std::vector<wchar_t> w(size / sizeof(wchar_t) + 1, 0);
  memcpy(w.data(), data, size / sizeof(wchar_t) * sizeof(wchar_t));
  return w;
}

void wide(const uint8_t* data, size_t size) {
  const uint32_t id = intern_wide(wide_of(data, size).data());
  if (id != NameTable::kOverflow && !valid_utf8(stored(id))) abort();
}

// An attribute struct as the job's NVTX version declares it: any size, any type.
void attributes(const uint8_t* data, size_t size) {
  if (size < 8) return;
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = uint16_t(data[0] | data[1] << 8);
  a.messageType = nvtxMessageType_t(int8_t(data[2]));
  const std::string text(reinterpret_cast<const char*>(data + 8), size - 8);
  const auto w = wide_of(data + 8, size - 8);
  uint32_t registered_id;
  memcpy(&registered_id, data + 4, 4);
  if (a.messageType == NVTX_MESSAGE_TYPE_ASCII) a.message.ascii = text.c_str();
  if (a.messageType == NVTX_MESSAGE_TYPE_UNICODE) a.message.unicode = w.data();
  if (a.messageType == NVTX_MESSAGE_TYPE_REGISTERED)
    a.message.registered = string_handle(registered_id);
  stored(message_id(&a));
  if (domain_id(domain_handle(registered_id)) != registered_id) abort();
  if (string_id(string_handle(registered_id)) != registered_id) abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  switch (data[0] % 3) {
    case 0:
      ascii(std::string(reinterpret_cast<const char*>(data + 1), size - 1));
      break;
    case 1:
      wide(data + 1, size - 1);
      break;
    default:
      attributes(data + 1, size - 1);
  }
  return 0;
}
