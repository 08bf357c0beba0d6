// The profiler plugin's open events and how they become rows. NCCL starts and
// stops events from its host threads and its proxy thread, stops them out of
// order, and starts a collective's proxy operations after the collective's own
// stop (the proxy thread picks them up after the launch). So an open event is
// a slot of a fixed pool, taken with one CAS and given back at its stop, and a
// child copies what it needs from its parent (communicator, sequence number,
// channel, peer) when it starts: a stopped slot keeps its fields until the
// pool's cursor comes round to it again, thousands of events later.
#pragma once

#include <atomic>
#include <cstdint>

namespace ddpscope::inject::nccl_profiler {

// What a child event inherits from its parent.
struct Lineage {
  std::atomic<uint64_t> comm_hash{0};
  std::atomic<int64_t> seq{-1};
  std::atomic<int64_t> coll_key{0};  // the collective's, unique in the process; 0: none
  std::atomic<int32_t> channel{0}, peer{-1};
  std::atomic<uint8_t> is_send{0};

  void copy_from(const Lineage& p);
};

struct CollSlot {
  std::atomic<uint32_t> busy{0};
  Lineage id;
  uint64_t t_start = 0, count = 0;
  uint32_t func = 0, algo = 0, proto = 0, dtype = 0, tid = 0;  // name-table ids
  int32_t root = -1, comm_rank = -1;
  uint8_t nchannels = 0, nwarps = 0;
};

struct OpSlot {
  std::atomic<uint32_t> busy{0};
  Lineage id;
  uint64_t t_start = 0;
  std::atomic<uint64_t> t_progress{0};
  int32_t nsteps = 0, chunk = 0;
};

// Indexes of a step's state timestamps (recordEventState).
enum StepState { kGpuWait, kPeerWait, kNetWait, kFlushWait, kStepStates };

struct StepSlot {
  std::atomic<uint32_t> busy{0};
  Lineage id;
  uint64_t t_start = 0;
  int32_t step = 0;
  std::atomic<uint64_t> t_state[kStepStates] = {};
  std::atomic<uint64_t> bytes{0};
};

// One channel of a collective's kernel: GPU global-timer start and stop.
struct KernelChSlot {
  std::atomic<uint32_t> busy{0};
  Lineage id;
  uint64_t t_start = 0, gpu_start = 0;
  std::atomic<uint64_t> gpu_stop{0};
};

// A synchronisation or copy batch of a copy-engine collective (v6).
enum CeOpKind : uint8_t { kCeSyncOp, kCeBatchOp };

struct CeOpSlot {
  std::atomic<uint32_t> busy{0};
  Lineage id;
  uint64_t t_start = 0, bytes = 0;
  int32_t nranks = 0, num_ops = 0;
  uint8_t kind = kCeSyncOp;
  bool is_complete = false, intra_sync = false;
};

template <typename Slot, uint32_t N>
class SlotPool {
 public:
  // A free slot, or null when the next few are all open (the event is dropped).
  // `ticket`, if given, receives the cursor value the slot was taken at: unique
  // in the pool's life and never 0, so a collective's key costs no atomic of
  // its own.
  Slot* acquire(uint64_t* ticket = nullptr) {
    for (int probe = 0; probe < 8; ++probe) {
      uint64_t at = cursor_.fetch_add(1, std::memory_order_relaxed);
      Slot& s = slots_[at % N];
      uint32_t free = 0;
      if (s.busy.compare_exchange_strong(free, 1, std::memory_order_acquire)) {
        if (ticket) *ticket = at + 1;
        return &s;
      }
    }
    return nullptr;
  }
  void release(Slot* s) { s->busy.store(0, std::memory_order_release); }
  // `p` as one of this pool's slots, or null: handles and parents NCCL hands
  // back are checked, never trusted (a parent may be another kind's handle).
  Slot* find(const void* p) {
    auto a = reinterpret_cast<uintptr_t>(p), b = reinterpret_cast<uintptr_t>(slots_);
    if (a < b || a >= b + sizeof(slots_) || (a - b) % sizeof(Slot)) return nullptr;
    return &slots_[(a - b) / sizeof(Slot)];
  }

 private:
  Slot slots_[N];
  std::atomic<uint64_t> cursor_{0};
};

}  // namespace ddpscope::inject::nccl_profiler

namespace ddpscope::inject {
struct ThreadState;
}

namespace ddpscope::inject::nccl_profiler {

// Writes one row's event into the calling thread's ring `t` (the source's
// conversion turns it into rows on the writer thread). Collectives take the
// ring's communication reserve: a flood of steps or other events cannot drop
// them.
void emit_comm(uint64_t comm_hash, const char* name, int nnodes, int nranks, int rank);
void emit_coll(ThreadState& t, const CollSlot& s, uint64_t t_end);
void emit_op(ThreadState& t, const OpSlot& s, uint64_t t_end);
void emit_step(ThreadState& t, const StepSlot& s, uint64_t t_end);
void emit_kernel_ch(ThreadState& t, const KernelChSlot& s, uint64_t t_end);
void emit_ce_op(ThreadState& t, const CeOpSlot& s, uint64_t t_end);

}  // namespace ddpscope::inject::nccl_profiler
