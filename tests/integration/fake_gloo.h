// A library that exports gloo::allreduce(gloo::AllreduceOptions const&) under
// the real mangled name, with an options class of another layout: the Gloo
// hook interposes on it as on any Gloo, and must find out that it cannot read
// these options before it reads anything (injector/gloo/gloo_layout.h).
#pragma once

#include <cstddef>
#include <cstdint>

namespace gloo {

class AllreduceOptions {
 public:
  // Where the real class keeps its context pointer, this one keeps `first`.
  uint64_t first = 0;
  float* data = nullptr;
  size_t elements = 0;
  uint64_t filler[24] = {};
};

// Sums `data` into data[0] (a stand-in for a collective with a visible result).
void allreduce(const AllreduceOptions& opts);

}  // namespace gloo
