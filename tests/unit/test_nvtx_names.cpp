// How NVTX names become interned ids: wide names as UTF-8 (cut on a character
// boundary), messages of event attributes by type, handles that round-trip.
#include <catch2/catch.hpp>
#include <string>

#include "injector/nvtx/nvtx_names.h"
#include "injector/runtime/name_table.h"

using namespace ddpscope::inject;
using namespace ddpscope::inject::nvtx;

namespace {

std::string name(uint32_t id) { return std::string(name_table().name(id)); }

nvtxEventAttributes_t attributes(nvtxMessageType_t type) {
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = type;
  return a;
}

}  // namespace

TEST_CASE("nvtx names: wide names are stored as UTF-8") {
  CHECK(name(intern_wide(L"backward")) == "backward");
  CHECK(name(intern_wide(L"gr\u00fc\u00dfe \u6b65 \U0001F680")) ==
        "gr\u00fc\u00dfe \u6b65 \U0001F680");
  CHECK(intern_wide(L"same") == intern_ascii("same"));
  CHECK(intern_wide(nullptr) == 0);
  const wchar_t not_a_character[] = {L'a', wchar_t(0xD800), wchar_t(0x110000), 0};
  CHECK(name(intern_wide(not_a_character)) == "a\uFFFD\uFFFD");
}

TEST_CASE("nvtx names: a long wide name is cut before a character that would not fit") {
  std::wstring w(NameTable::kMaxLength - 1, L'x');
  w += L'\u00fc';  // 2 bytes: would end at kMaxLength + 1
  std::string stored = name(intern_wide(w.c_str()));
  CHECK(stored == std::string(NameTable::kMaxLength - 1, 'x'));
}

TEST_CASE("nvtx names: event attribute messages by type") {
  auto a = attributes(NVTX_MESSAGE_TYPE_ASCII);
  a.message.ascii = "attr-ascii";
  CHECK(name(message_id(&a)) == "attr-ascii");

  auto w = attributes(NVTX_MESSAGE_TYPE_UNICODE);
  w.message.unicode = L"attr-wide";
  CHECK(name(message_id(&w)) == "attr-wide");

  auto r = attributes(NVTX_MESSAGE_TYPE_REGISTERED);
  r.message.registered = string_handle(intern_ascii("attr-registered"));
  CHECK(name(message_id(&r)) == "attr-registered");

  auto none = attributes(NVTX_MESSAGE_UNKNOWN);
  CHECK(message_id(&none) == 0);
  CHECK(message_id(nullptr) == 0);
  a.size = 16;  // a struct too small to carry a message is not read past its end
  CHECK(message_id(&a) == 0);
}

TEST_CASE("nvtx names: domain handles are never null and round-trip") {
  uint32_t id = intern_ascii("handle-domain");
  CHECK(domain_handle(id) != nullptr);
  CHECK(domain_handle(0) != nullptr);  // an empty-named domain is still a domain handle
  CHECK(domain_id(domain_handle(id)) == id);
  CHECK(domain_id(nullptr) == 0);  // NVTX's default domain
  CHECK(string_id(string_handle(id)) == id);
}
