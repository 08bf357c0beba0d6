// DDP's own account as a capture source: the Python start-up hook
// (injector/ddp/python/) calls these C functions through ctypes, and their
// events become rows of ddp_info and ddp_regions (profiler/store/rows_ddp.cpp).
//
// The regions come once per DDP forward, comm-hook bucket or
// torch.distributed call, through the hook's builtins where the injector
// could make them (region_builtins.cpp), else through ctypes; the facts once
// per fact about a DDP instance (python_facts.h: strings of any length, a
// model's parameter sizes).
#include "injector/ddp/ddp_source.h"

#include <cstdint>
#include <string>

#include "injector/ddp/python_facts.h"
#include "injector/runtime/capture.h"
#include "injector/runtime/source.h"
#include "profiler/core/clock.h"

namespace ddpscope::inject::ddp {
namespace {

enum Kind : uint8_t { kRegion = 0, kInfo = 1 };

struct RegionEvent {
  int64_t pg_key, seq_begin, seq_end;
  uint64_t t_begin, t_end;
  int32_t instance, bucket;
  uint32_t flags, tid;
  uint8_t kind;
};

void convert(const Event& e, Rows& rows) {
  if (e.kind == kRegion) {
    const auto& r = e.as<RegionEvent>();
    DdpRegionRecord rec;
    rec.instance = r.instance;
    rec.kind = DdpRegionKind(r.kind);
    rec.bucket = r.bucket;
    rec.pg_key = r.pg_key;
    rec.seq_begin = r.seq_begin;
    rec.seq_end = r.seq_end;
    rec.flags = r.flags;
    rec.tid = r.tid;
    rec.start_ns = rows.to_ns(r.t_begin);
    rec.end_ns = rows.to_ns(r.t_end);
    rows.add(rec);
  } else if (e.kind == kInfo) {
    const auto& f = e.as<FactEvent>();
    auto [key, value] = take_fact(f);
    rows.add(DdpInfoRecord{0, f.owner, std::move(key), std::move(value), rows.to_ns(f.t)});
  }
}

SourceId source() {
  static const SourceId id = register_source({"ddp", convert});
  return id;
}

bool valid_kind(int kind) { return kind >= 0 && kind <= int(DdpRegionKind::user); }

}  // namespace

uint64_t now() { return ddpscope::clock::ticks(); }

void note(const Region& r) {
  if (!capturing() || !valid_kind(r.kind)) return;
  ReentrancyGuard guard;  // attaching a thread may start the runtime
  uint32_t tid = thread_id();
  auto* ev = reserve_event_body<RegionEvent>(source(), kRegion);
  if (!ev) return;
  *ev = RegionEvent{r.pg_key,   r.seq_begin, r.seq_end, r.t_begin, r.t_end,
                    r.instance, r.bucket,    r.flags,   tid,       uint8_t(r.kind)};
  publish_event();
}

}  // namespace ddpscope::inject::ddp

using namespace ddpscope::inject;

extern "C" {

// 1 while this process records (the hook installs nothing otherwise).
__attribute__((visibility("default"))) int ddpscope_py_recording(void) {
  return g_state.load(std::memory_order_relaxed) <= int(State::running) ? 1 : 0;
}

// The capture clock's raw ticks, for the hook's region bounds.
__attribute__((visibility("default"))) uint64_t ddpscope_py_now(void) { return ddp::now(); }

__attribute__((visibility("default"))) void ddpscope_py_region(int kind, int instance, int bucket,
                                                               int64_t pg_key, int64_t seq_begin,
                                                               int64_t seq_end, uint32_t flags,
                                                               uint64_t t_begin, uint64_t t_end) {
  ddp::note({kind, instance, bucket, pg_key, seq_begin, seq_end, flags, t_begin, t_end});
}

__attribute__((visibility("default"))) void ddpscope_py_info(int instance, const char* key,
                                                             const char* value) {
  publish_fact(ddp::source(), ddp::kInfo, instance, key, value);
}

}  // extern "C"
