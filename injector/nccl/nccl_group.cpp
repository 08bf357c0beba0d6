#include "injector/nccl/nccl_group.h"

#include <atomic>

#include "injector/nccl/nccl_comm_info.h"
#include "injector/nccl/nccl_source.h"
#include "injector/runtime/capture.h"
#include "injector/runtime/collective_timer.h"
#include "injector/runtime/device_tracer.h"

namespace ddpscope::inject::nccl {
namespace {

constexpr int kMaxHeld = 512;   // calls held per group (all-to-all of 256 peers)
constexpr int kMaxStreams = 8;  // distinct streams timed per group

struct GroupState {
  int depth = 0;
  uint64_t id = 0;
  int held = 0;
  CollectiveEvent events[kMaxHeld];
  CommInfo* comms[kMaxHeld];
  int streams = 0;
  uint64_t stream[kMaxStreams];
  uint32_t slot[kMaxStreams];
  uint32_t correlation = 0;  // pushed to CUPTI around the launching ncclGroupEnd
};

// Lazily allocated: most threads never open a group, and 53 KiB of TLS each
// would be wasteful.
thread_local GroupState* tl_group DDPSCOPE_TLS = nullptr;
std::atomic<uint64_t> g_next_group{0};

// Frees the thread's group state when the thread ends (a job whose pool makes
// short-lived threads would otherwise leak 53 KiB per thread). Touched only
// when a group state is made, so tl_group itself stays a plain TLS pointer.
struct GroupReaper {
  ~GroupReaper() {
    delete tl_group;
    tl_group = nullptr;
  }
};

GroupState& group() {
  if (!tl_group) {
    static thread_local GroupReaper reaper;
    (void)reaper;
    tl_group = new GroupState;
  }
  return *tl_group;
}

int stream_index(GroupState& g, uint64_t stream) {
  for (int i = 0; i < g.streams; ++i)
    if (g.stream[i] == stream) return i;
  return -1;
}

}  // namespace

uint64_t current_group() { return tl_group && tl_group->depth > 0 ? tl_group->id : 0; }

void group_started() {
  GroupState& g = group();
  if (g.depth++ == 0) {
    g.id = g_next_group.fetch_add(1, std::memory_order_relaxed) + 1;
    g.held = 0;
    g.streams = 0;
  }
}

bool hold_in_group(const CollectiveEvent& e, CommInfo* comm) {
  GroupState& g = group();
  if (g.held == kMaxHeld) return false;
  g.comms[g.held] = comm;
  g.events[g.held++] = e;
  return true;
}

bool leave_group() {
  if (!tl_group || tl_group->depth == 0) return false;  // unbalanced End: NCCL reports it
  return --tl_group->depth == 0;
}

void begin_group_timers() {
  GroupState& g = group();
  if (DeviceTracer* tracer = g.held ? device_tracer() : nullptr) {
    g.correlation = next_correlation();
    tracer->push_correlation(g.correlation);
    return;  // CUPTI times the group's kernels: no CUDA events needed
  }
  CollectiveTimer* timer = g.held ? collective_timer() : nullptr;
  if (!timer) return;
  for (int i = 0; i < g.held; ++i) {
    uint64_t s = g.events[i].stream;
    if (stream_index(g, s) >= 0 || g.streams == kMaxStreams) continue;
    g.stream[g.streams] = s;
    g.slot[g.streams] = timer->begin(reinterpret_cast<void*>(s));
    ++g.streams;
  }
}

void end_group_timers_and_emit() {
  GroupState& g = group();
  if (g.correlation) device_tracer()->pop_correlation();
  CollectiveTimer* timer = g.streams ? collective_timer() : nullptr;
  for (int k = 0; timer && k < g.streams; ++k) {
    if (g.slot[k] == kNoTimer) continue;
    int uses = 0;
    for (int i = 0; i < g.held; ++i) uses += g.events[i].stream == g.stream[k];
    timer->end(g.slot[k], reinterpret_cast<void*>(g.stream[k]), uses);
  }
  for (int i = 0; i < g.held; ++i) {
    int k = timer ? stream_index(g, g.events[i].stream) : -1;
    g.events[i].timer = k >= 0 && g.slot[k] != kNoTimer ? g.slot[k] : kNoTimer;
    g.events[i].correlation = g.correlation;
    g.events[i].seq = g.comms[i] ? next_seq(*g.comms[i]) : 0;
    if (!emit(g.events[i]) && g.events[i].timer != kNoTimer)
      timer->release(g.events[i].timer);  // a use no event will make
  }
  discard_group();
}

void discard_group() {
  GroupState& g = group();
  g.held = 0;
  g.streams = 0;
  g.id = 0;
  g.correlation = 0;
}

bool emit(const CollectiveEvent& e) {
  auto* slot = reserve_event_body<CollectiveEvent>(source(), uint8_t(CommEventKind::collective),
                                                   EventClass::comm);
  if (!slot) return false;
  *slot = e;
  publish_event();
  return true;
}

}  // namespace ddpscope::inject::nccl
