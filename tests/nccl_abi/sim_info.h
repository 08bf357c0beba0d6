// The layout of NCCL's ncclSimInfo_t (nccl.h, NCCL >= 2.22: ncclSimInfo_v22200),
// which nccl_abi.h keeps opaque: the test library reads and fills it as NCCL
// does, and test programs initialise it as NCCL_SIM_INFO_INITIALIZER would.
#pragma once

#include <cstddef>

namespace ddpscope::testnccl {

struct SimInfo {
  size_t size;
  unsigned int magic;
  unsigned int version;
  float estimatedTime;
};

inline constexpr unsigned int kSimInfoMagic = 0x74685283;

inline SimInfo sim_info_initializer() { return {sizeof(SimInfo), kSimInfoMagic, 22809, -1.0f}; }

}  // namespace ddpscope::testnccl
