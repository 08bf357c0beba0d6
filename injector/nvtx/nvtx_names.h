// How NVTX names reach our events. The domain and registered-string handles we
// hand to NVTX are interned name ids in disguise (never dereferenced by NVTX or
// the app), so turning a handle back into a name is arithmetic, not a lookup.
// Messages in event attributes (ASCII, wide, registered) become name ids too.
#pragma once

#define NVTX_NO_IMPL  // a tool needs NVTX's types, not its implementation
#include <nvtx3/nvToolsExt.h>

#include <cstdint>

namespace ddpscope::inject::nvtx {

// Odd, so never null: a null domain handle is NVTX's default domain (id 0).
inline nvtxDomainHandle_t domain_handle(uint32_t name_id) {
  return reinterpret_cast<nvtxDomainHandle_t>((uintptr_t(name_id) << 1) | 1);
}
inline uint32_t domain_id(nvtxDomainHandle_t domain) {
  return uint32_t(reinterpret_cast<uintptr_t>(domain) >> 1);
}
inline nvtxStringHandle_t string_handle(uint32_t name_id) {
  return reinterpret_cast<nvtxStringHandle_t>((uintptr_t(name_id) << 1) | 1);
}
inline uint32_t string_id(nvtxStringHandle_t s) {
  return uint32_t(reinterpret_cast<uintptr_t>(s) >> 1);
}

uint32_t intern_ascii(const char* s);
// Wide (UTF-32 on Linux) names are stored as UTF-8.
uint32_t intern_wide(const wchar_t* s);
// The message of an event attribute; 0 (empty name) when it has none.
uint32_t message_id(const nvtxEventAttributes_t* attributes);

}  // namespace ddpscope::inject::nvtx
