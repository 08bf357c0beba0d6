// FSDP2's own account as a capture source: the Python start-up hook
// (injector/ddp/python/ddpscope_ddp/fsdp_patches.py) calls these C functions
// through ctypes, and their events become rows of fsdp_info and fsdp_regions
// (profiler/store/rows_fsdp.cpp).
//
// Not on a collective's hot path: one region per collective FSDP issues (a
// few per unit and step), one fact per unit and key (python_facts.h).
#include <cstdint>
#include <string>

#include "injector/ddp/python_facts.h"
#include "injector/runtime/capture.h"
#include "injector/runtime/source.h"
#include "profiler/core/clock.h"

namespace ddpscope::inject::fsdp {
namespace {

enum Kind : uint8_t { kRegion = 0, kInfo = 1 };

struct RegionEvent {
  int64_t pg_key, seq_begin, seq_end;
  uint64_t t_begin, t_end;
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
                              .start_ns = rows.to_ns(r.t_begin),
                              .end_ns = rows.to_ns(r.t_end)});
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

__attribute__((visibility("default"))) void ddpscope_py_fsdp_region(
    int kind, int unit, int64_t pg_key, int64_t seq_begin, int64_t seq_end, uint32_t flags,
    uint64_t t_begin, uint64_t t_end) {
  if (!capturing() || !fsdp::valid_kind(kind)) return;
  ReentrancyGuard guard;  // attaching a thread may start the runtime
  uint32_t tid = thread_id();
  auto* ev = reserve_event_body<fsdp::RegionEvent>(fsdp::source(), fsdp::kRegion);
  if (!ev) return;
  *ev = fsdp::RegionEvent{pg_key, seq_begin, seq_end, t_begin,      t_end,
                          unit,   flags,     tid,     uint8_t(kind)};
  publish_event();
}

__attribute__((visibility("default"))) void ddpscope_py_fsdp_info(int unit, const char* key,
                                                                  const char* value) {
  publish_fact(fsdp::source(), fsdp::kInfo, unit, key, value);
}

}  // extern "C"
