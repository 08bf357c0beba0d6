// FSDP2's own account as a capture source: the Python start-up hook
// (injector/ddp/python/ddpscope_ddp/fsdp_patches.py) notes each unit's facts
// through ctypes, once, and its regions and marks through two builtins
// (fsdp_builtins.cpp) on every collective; they become rows of fsdp_info and
// fsdp_regions (profiler/store/rows_fsdp.cpp).
#include "injector/ddp/fsdp_source.h"

#include <cstdint>
#include <string>

#include "injector/ddp/python_facts.h"
#include "injector/runtime/capture.h"
#include "injector/runtime/source.h"

namespace ddpscope::inject::fsdp {
namespace {

enum Kind : uint8_t { kRegion = 0, kInfo = 1 };

struct RegionEvent {
  int64_t pg_key, seq_begin, seq_end;
  int64_t t_begin, t_end;  // CLOCK_MONOTONIC ns (Python's time.monotonic_ns)
  int32_t unit;
  uint32_t flags, tid;
  uint8_t kind;
};

void convert(const Event& e, Rows& rows) {
  if (e.kind == kRegion) {
    const auto& r = e.as<RegionEvent>();
    rows.add(FsdpRegionRecord{.unit = r.unit,
                              .kind = FsdpRegionKind(r.kind),
                              .pg_key = r.pg_key,
                              .seq_begin = r.seq_begin,
                              .seq_end = r.seq_end,
                              .flags = r.flags,
                              .tid = r.tid,
                              .start_ns = r.t_begin,
                              .end_ns = r.t_end});
  } else if (e.kind == kInfo) {
    const auto& f = e.as<FactEvent>();
    auto [key, value] = take_fact(f);
    rows.add(FsdpInfoRecord{0, f.owner, std::move(key), std::move(value), rows.to_ns(f.t)});
  }
}

SourceId source() {
  static const SourceId id = register_source({"fsdp", convert});
  return id;
}

bool valid_kind(int kind) { return kind >= 0 && kind <= int(FsdpRegionKind::backward_end); }

}  // namespace

void note(const Region& r) {
  ThreadState& t = this_thread();
  if (!capturing(t) || !valid_kind(r.kind)) return;
  ReentrancyGuard guard(t);  // attaching a thread may start the runtime
  auto* ev = reserve_event_body<RegionEvent>(t, source(), kRegion);
  if (!ev) return;
  int64_t seq_end = r.seq_end > 0 ? r.seq_end : -1;
  *ev = RegionEvent{.pg_key = r.pg_key,
                    .seq_begin = seq_end > 0 ? seq_end - 1 : -1,
                    .seq_end = seq_end,
                    .t_begin = r.t_begin,
                    .t_end = r.t_end,
                    .unit = int32_t(r.unit),
                    .flags = r.flags,
                    .tid = t.tid,
                    .kind = uint8_t(r.kind)};
  publish_event(t);
}

}  // namespace ddpscope::inject::fsdp

using namespace ddpscope::inject;

extern "C" {

__attribute__((visibility("default"))) void ddpscope_py_fsdp_info(int unit, const char* key,
                                                                  const char* value) {
  publish_fact(fsdp::source(), fsdp::kInfo, unit, key, value);
}

}  // extern "C"
