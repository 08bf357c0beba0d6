// The leading fields of NCCL's ncclConfig_t (nccl.h: size, magic, version,
// blocking, in that order since NCCL 2.14), which nccl_abi.h keeps opaque: the
// test library reads `blocking` from them, and test programs fill them as
// NCCL_CONFIG_INITIALIZER would before asking for a non-blocking communicator.
#pragma once

#include <cstddef>

namespace ddpscope::testnccl {

struct ConfigPrefix {
  size_t size;
  unsigned int magic;
  unsigned int version;
  int blocking;
};

inline constexpr unsigned int kConfigMagic = 0xcafebeef;

inline bool nonblocking(const void* config) {
  auto* c = static_cast<const ConfigPrefix*>(config);
  return c && c->magic == kConfigMagic && c->blocking == 0;
}

}  // namespace ddpscope::testnccl
