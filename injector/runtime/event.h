// The fixed-size POD event a hook writes into its thread's ring. It names the
// capture source that wrote it (source.h) and carries that source's own POD
// body. Times are raw ticks (profiler/core/clock.h); names are interned ids;
// nothing here allocates.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace ddpscope::inject {

using SourceId = uint8_t;
constexpr size_t kEventBody = 104;

struct Event {
  SourceId source;
  uint8_t kind;  // the source's own kinds
  alignas(8) unsigned char body[kEventBody];

  template <typename Body>
  Body& as() {
    static_assert(sizeof(Body) <= kEventBody && std::is_trivially_copyable_v<Body>,
                  "an event body is a small POD");
    return *reinterpret_cast<Body*>(body);
  }
  template <typename Body>
  const Body& as() const {
    return *reinterpret_cast<const Body*>(body);
  }
};

static_assert(sizeof(Event) <= 112, "keep events small: they are copied on the hot path");

}  // namespace ddpscope::inject
