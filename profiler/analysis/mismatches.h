// Which ranks called different collectives (docs/hangs.md): one sequence
// number on one communicator with another op, dtype or element count on some
// ranks. Point-to-point calls (send, recv) are left out: their numbers do not
// pair ranks up.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "profiler/analysis/iterations.h"
#include "profiler/analysis/run_analysis.h"
#include "profiler/core/records.h"

namespace ddpscope::analysis {

// The distinct shapes (op, dtype, element count) of a run's collectives,
// numbered as first seen: a Call carries its shape's number (Call::shape),
// so the analysis's one pass over the collectives serves the mismatch
// finder too, in four bytes a call.
class ShapeTable {
 public:
  uint32_t id(Op op, Dtype dtype, uint64_t count);
  const Mismatch::Shape& operator[](uint32_t id) const { return shapes_[id]; }  // no ranks

 private:
  struct Key {
    Op op;
    Dtype dtype;
    uint64_t count;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const;
  };
  std::vector<Mismatch::Shape> shapes_;
  std::unordered_map<Key, uint32_t, KeyHash> ids_;
};

// From every rank's completed calls (their shapes numbered in `shapes`) and
// in-flight collectives; ordered by communicator and sequence number, each
// mismatch's shapes by op, dtype and count names, their ranks ascending.
std::vector<Mismatch> find_mismatches(const std::vector<Call>& calls, ShapeTable& shapes,
                                      const std::vector<InflightRecord>& inflight);

}  // namespace ddpscope::analysis
