#include "injector/nvtx/nvtx_ranges.h"

#include <atomic>

#include "injector/runtime/capture.h"
#include "injector/runtime/log.h"
#include "injector/runtime/name_table.h"
#include "injector/runtime/source.h"
#include "profiler/core/clock.h"

namespace ddpscope::inject::nvtx {
namespace {

// 32 deep covers step/forward/backward markers and torch's emit_nvtx op
// nesting; deeper pushes are counted, not recorded, and still pop in pairs.
constexpr int kMaxDepth = 32;

struct OpenRange {
  uint64_t t_start;  // 0: pushed while not recording, so never emitted
  uint32_t domain, name;
};

struct RangeStack {
  int depth;
  int overflow;  // pushes beyond kMaxDepth still to be popped
  OpenRange open[kMaxDepth];
};

// NVTX as a capture source (injector/runtime/source.h): a closed range, its
// names interned (name_table.h); one row of the ranges table.
struct RangeEvent {
  uint64_t t_start, t_end;
  uint32_t domain, name;  // name-table ids; domain 0 is NVTX's default domain
  uint32_t tid;
};

void convert(const Event& e, Rows& rows) {
  const auto& r = e.as<RangeEvent>();
  rows.add(RangeRecord{0, r.tid, std::string(name_table().name(r.domain)),
                       std::string(name_table().name(r.name)), rows.to_ns(r.t_start),
                       rows.to_ns(r.t_end)});
}

SourceId source() {
  static const SourceId id = register_source({"nvtx", convert});
  return id;
}

// Zero-initialised POD: no TLS constructor, so access is the TLS address alone.
thread_local RangeStack tl_stack DDPSCOPE_TLS;

// Start/end ranges: slot = id mod kSlots; the slot's id says who owns it
// (0: free), so a stale or unknown id never closes someone else's range.
constexpr uint64_t kSlots = 4096;
constexpr int kProbes = 8;

struct OpenSlot {
  std::atomic<uint64_t> id{0};
  // Atomics only so that a late duplicate end that loses the race below reads
  // no torn value; relaxed loads and stores are plain moves.
  std::atomic<uint64_t> t_start{0};
  std::atomic<uint32_t> domain{0}, name{0}, tid{0};
};

OpenSlot g_open[kSlots];
std::atomic<uint64_t> g_next_id{1};

void emit(uint64_t t_start, uint64_t t_end, uint32_t domain, uint32_t name, uint32_t tid) {
  ReentrancyGuard guard;  // attaching a thread may start the runtime
  auto* ev = reserve_event_body<RangeEvent>(source(), 0);
  if (!ev) return;
  *ev = RangeEvent{t_start, t_end, domain, name, tid};
  publish_event();
}

int level_in_domain(const RangeStack& s, int below, uint32_t domain) {
  int level = 0;
  for (int i = 0; i < below; ++i) level += s.open[i].domain == domain;
  return level;
}

void say_once(std::atomic<bool>& said, const char* what) {
  if (!said.exchange(true, std::memory_order_relaxed)) notice_once(Notice::misc, "%s", what);
}

}  // namespace

int push_range(uint32_t domain, uint32_t name) {
  uint64_t t = capturing() ? clock::ticks() : 0;
  RangeStack& s = tl_stack;
  if (s.depth == kMaxDepth) {
    static std::atomic<bool> said{false};
    say_once(said,
             "NVTX ranges nested deeper than 32 on a thread; the deeper ones are not recorded");
    ++s.overflow;
    return level_in_domain(s, s.depth, domain) + s.overflow - 1;
  }
  int level = level_in_domain(s, s.depth, domain);
  s.open[s.depth++] = OpenRange{t, domain, name};
  return level;
}

int pop_range(uint32_t domain) {
  uint64_t t_end = capturing() ? clock::ticks() : 0;
  RangeStack& s = tl_stack;
  if (s.overflow > 0) {  // the most recent pushes were the unrecorded ones
    --s.overflow;
    return level_in_domain(s, s.depth, domain) + s.overflow;
  }
  int i = s.depth - 1;
  while (i >= 0 && s.open[i].domain != domain) --i;
  if (i < 0) return -1;  // unbalanced pop: NVTX's own error value
  OpenRange r = s.open[i];
  for (int j = i; j + 1 < s.depth; ++j) s.open[j] = s.open[j + 1];
  --s.depth;
  if (r.t_start && t_end) emit(r.t_start, t_end, r.domain, r.name, thread_id());
  return level_in_domain(s, i, domain);
}

uint64_t start_range(uint32_t domain, uint32_t name) {
  if (!capturing()) return 0;
  uint64_t t = clock::ticks();
  uint32_t tid = thread_id();
  for (int probe = 0; probe < kProbes; ++probe) {
    uint64_t id = g_next_id.fetch_add(1, std::memory_order_relaxed);
    OpenSlot& slot = g_open[id % kSlots];
    uint64_t free = 0;  // else still open from kSlots starts ago: try the next id
    if (!slot.id.compare_exchange_strong(free, id, std::memory_order_acquire)) continue;
    slot.t_start.store(t, std::memory_order_relaxed);
    slot.domain.store(domain, std::memory_order_relaxed);
    slot.name.store(name, std::memory_order_relaxed);
    slot.tid.store(tid, std::memory_order_relaxed);
    return id;  // the app hands it to the ending thread: that publishes the fields
  }
  static std::atomic<bool> said{false};
  say_once(said,
           "more than 4096 NVTX start/end ranges open at once; further ones are not recorded");
  return 0;
}

void end_range(uint64_t id) {
  if (id == 0) return;
  uint64_t t_end = clock::ticks();
  OpenSlot& slot = g_open[id % kSlots];
  if (slot.id.load(std::memory_order_acquire) != id) return;  // unknown, or ended twice
  uint64_t t_start = slot.t_start.load(std::memory_order_relaxed);
  uint32_t domain = slot.domain.load(std::memory_order_relaxed);
  uint32_t name = slot.name.load(std::memory_order_relaxed);
  uint32_t tid = slot.tid.load(std::memory_order_relaxed);
  if (!slot.id.compare_exchange_strong(id, 0, std::memory_order_acq_rel)) return;
  if (capturing()) emit(t_start, t_end, domain, name, tid);
}

}  // namespace ddpscope::inject::nvtx
