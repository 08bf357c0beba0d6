// FSDP2's own account as a capture source: the Python start-up hook
// (injector/ddp/python/ddpscope_ddp/fsdp_patches.py) calls these C functions
// through ctypes, and their events become rows of fsdp_info and fsdp_regions
// (profiler/store/rows_fsdp.cpp).
//
// The hook runs on every collective FSDP issues, where a ctypes call costs
// more than the rest of its work: it keeps its regions and marks in a Python
// array, timed with Python's own monotonic clock, and hands them over in
// batches (at every step's start and end), one call for many events.
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
}  // namespace ddpscope::inject::fsdp

using namespace ddpscope::inject;

extern "C" {

// The calling thread's number in the rank file (attaching it): the hook
// notes it with each event, since a batch may be handed over by another thread.
__attribute__((visibility("default"))) uint32_t ddpscope_py_thread_id(void) {
  if (!capturing()) return 0;
  ReentrancyGuard guard;  // attaching a thread may start the runtime
  return thread_id();
}

// `count` events of 8 int64 each: kind, unit, pg_key, seq_end (the group's
// count after the collective, so it is seq_end - 1; -1 for a mark or where
// unknown), flags, tid, begin and end (monotonic ns). Called with the GIL
// held (ctypes.PyDLL): the array cannot move or grow meanwhile.
__attribute__((visibility("default"))) void ddpscope_py_fsdp_events(const int64_t* events,
                                                                    int count) {
  if (!capturing() || !events) return;
  ReentrancyGuard guard;
  for (int i = 0; i < count; ++i) {
    const int64_t* f = events + 8 * i;
    if (!fsdp::valid_kind(int(f[0]))) continue;
    auto* ev = reserve_event_body<fsdp::RegionEvent>(fsdp::source(), fsdp::kRegion);
    if (!ev) return;
    int64_t seq_end = f[3] > 0 ? f[3] : -1;
    *ev = fsdp::RegionEvent{.pg_key = f[2],
                            .seq_begin = seq_end > 0 ? seq_end - 1 : -1,
                            .seq_end = seq_end,
                            .t_begin = f[6],
                            .t_end = f[7],
                            .unit = int32_t(f[1]),
                            .flags = uint32_t(f[4]),
                            .tid = uint32_t(f[5]),
                            .kind = uint8_t(f[0])};
    publish_event();
  }
}

__attribute__((visibility("default"))) void ddpscope_py_fsdp_info(int unit, const char* key,
                                                                  const char* value) {
  publish_fact(fsdp::source(), fsdp::kInfo, unit, key, value);
}

}  // extern "C"
