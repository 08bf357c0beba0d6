// Elementwise reductions for every NCCL datatype and built-in op.
#pragma once

#include <cstddef>
#include <vector>

#include "injector/nccl/nccl_abi.h"

namespace ddpscope::testnccl {

// True for the built-in ops (sum, prod, max, min, avg); dynamic ops are not supported.
bool valid_op(int op);

// out[i] = op over inputs[r][i] for r in rank order; avg divides the sum by inputs.size().
// `out` may alias no input (the caller reduces into scratch memory). Returns
// ncclInvalidArgument for an unknown dtype or op.
ncclResult_t reduce_arrays(const std::vector<const void*>& inputs, void* out, size_t count,
                           int dtype, int op);

}  // namespace ddpscope::testnccl
