// The conversion of CUPTI activity records into our records: a pure function
// of the record (and a clock offset), so that it is unit-tested on a machine
// without a GPU with hand-built CUPTI structs (tests/unit/test_cupti_convert.cpp).
#pragma once

#include <cupti_activity.h>

#include <string>
#include <string_view>

#include "injector/runtime/device_tracer.h"

namespace ddpscope::inject::cupti {

// NCCL's kernels: ncclDevKernel_* (2.19+), ncclSymkDevKernel_* (symmetric
// kernels, 2.27+), ncclKernel_* (older). `name` is demangled (or a plain C name).
bool is_nccl_kernel(std::string_view name);

// The demangled name of a kernel symbol ("" in, "" out; unmangled names pass
// through); argument lists are dropped: "ncclDevKernel_AllReduce_Sum_f32_RING_LL".
std::string kernel_display_name(const char* mangled);

// Adds what `record` says to `out`. `offset_ns` maps CUPTI's timestamps onto
// our monotonic clock (0 when CUPTI uses our clock through the timestamp
// callback). Records of kinds we do not use are ignored.
void convert(const CUpti_Activity* record, int64_t offset_ns, ActivityBatch& out);

}  // namespace ddpscope::inject::cupti
