#include "comm.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>

namespace ddpscope::testnccl {

// Ranks that have called ncclCommInitRank with one id and are waiting for the rest.
struct Rendezvous {
  int nranks = 0;
  int arrived = 0;
  std::vector<ncclComm*> members;  // indexed by rank; guarded by the registry mutex
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;  // guarded by mu
};

namespace {

constexpr char kIdMagic[] = "ddpscope-nccl-testlib";

// Rendezvous still missing ranks, by id bytes. The mutex is held only to look up and
// register, never while waiting.
struct Registry {
  std::mutex mu;
  std::map<std::string, std::shared_ptr<Rendezvous>> open;
};

Registry& registry() {
  static auto* r = new Registry;  // never destroyed: threads may still rendezvous at exit
  return *r;
}

// NCCL puts each rank on the calling thread's current CUDA device. There is no CUDA here,
// so tests pick the device with DDPSCOPE_TEST_DEVICE, else the rank stands in for it.
int device_for_rank(int rank) {
  if (const char* env = std::getenv("DDPSCOPE_TEST_DEVICE")) {
    char* end = nullptr;
    const long v = std::strtol(env, &end, 10);
    if (end != env && *end == '\0' && v >= 0 && v <= 1 << 20) return static_cast<int>(v);
  }
  return rank;
}

// Destroyed handles' storage, reused most recent first. Never destroyed:
// threads may still make communicators at exit.
struct FreeHandles {
  std::mutex mu;
  std::vector<void*> blocks;
};
FreeHandles& free_handles() {
  static auto* f = new FreeHandles;
  return *f;
}

uint64_t next_serial() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

CommShared::CommShared(int n) : nranks(n), serial(next_serial()), coll_seq(n, 0) {}

bool is_comm(const ncclComm* c) { return c != nullptr && c->magic == kCommMagic; }

std::vector<ncclComm*> make_comm_group(const std::vector<int>& devices) {
  const int n = static_cast<int>(devices.size());
  auto shared = std::make_shared<CommShared>(n);
  std::vector<ncclComm*> comms(n);
  for (int r = 0; r < n; ++r) {
    comms[r] = new ncclComm;
    comms[r]->rank = r;
    comms[r]->nranks = n;
    comms[r]->device = devices[r];
    comms[r]->shared = shared;
  }
  return comms;
}

ncclComm* new_unjoined_comm(int nranks, int rank) {
  auto* c = new ncclComm;
  c->rank = rank;
  c->nranks = nranks;
  c->device = device_for_rank(rank);
  return c;
}

void destroy_comm(ncclComm* c, bool abort) {
  if (abort && c->shared) {
    {
      std::lock_guard<std::mutex> lock(c->shared->mu);
      c->shared->aborted = true;
    }
    c->shared->cv.notify_all();
  }
  c->magic = 0;
  delete c;
}

void make_unique_id(ncclUniqueId* id) {
  static std::atomic<uint64_t> counter{0};
  std::memset(id->internal, 0, sizeof id->internal);
  const uint64_t fields[] = {
      static_cast<uint64_t>(::getpid()), counter.fetch_add(1),
      static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count())};
  std::memcpy(id->internal, kIdMagic, sizeof kIdMagic);
  std::memcpy(id->internal + sizeof kIdMagic, fields, sizeof fields);
}

Join join_rendezvous(ncclComm* c, const ncclUniqueId& id) {
  const std::string key(id.internal, sizeof id.internal);
  std::shared_ptr<Rendezvous> rv;
  {
    Registry& reg = registry();
    std::lock_guard<std::mutex> lock(reg.mu);
    auto& slot = reg.open[key];
    if (!slot) {
      slot = std::make_shared<Rendezvous>();
      slot->nranks = c->nranks;
      slot->members.assign(c->nranks, nullptr);
    }
    // Disagreeing on the size, or two handles claiming one rank, cannot form a comm.
    if (slot->nranks != c->nranks || slot->members[c->rank] != nullptr) {
      return {nullptr, ncclInvalidArgument};
    }
    slot->members[c->rank] = c;
    rv = slot;
    if (++rv->arrived < rv->nranks) return {rv, ncclSuccess};
    reg.open.erase(key);  // complete: the id may be used again for a new communicator
  }
  // The last rank to arrive builds the communicator for everybody.
  auto shared = std::make_shared<CommShared>(rv->nranks);
  for (ncclComm* m : rv->members) m->shared = shared;
  {
    std::lock_guard<std::mutex> lock(rv->mu);
    rv->done = true;
  }
  rv->cv.notify_all();
  return {rv, ncclSuccess};
}

ncclResult_t wait_rendezvous(const Join& join) {
  if (join.error != ncclSuccess) return join.error;
  std::unique_lock<std::mutex> lock(join.rv->mu);
  join.rv->cv.wait(lock, [&] { return join.rv->done; });
  return ncclSuccess;
}

bool leave_rendezvous(ncclComm* c, const ncclUniqueId& id) {
  const std::string key(id.internal, sizeof id.internal);
  Registry& reg = registry();
  std::lock_guard<std::mutex> lock(reg.mu);
  const auto it = reg.open.find(key);
  if (it == reg.open.end()) return false;
  Rendezvous& rv = *it->second;
  if (c->rank >= rv.nranks || rv.members[c->rank] != c) return false;
  rv.members[c->rank] = nullptr;
  if (--rv.arrived == 0) reg.open.erase(it);
  return true;
}

}  // namespace ddpscope::testnccl

// Communicator handles are recycled, the most recently destroyed first, as
// glibc's malloc hands a freed block of one size out again. So a new
// communicator can sit at a destroyed one's address under any allocator,
// ASan's too (its quarantine holds freed blocks back), and the hooks must tell
// the two apart (test_nccl_hooks: "a destroyed communicator is forgotten").
// The storage stays ours, so is_comm() may read a destroyed handle's magic.
void* ncclComm::operator new(size_t size) {
  auto& f = ddpscope::testnccl::free_handles();
  {
    std::lock_guard<std::mutex> lock(f.mu);
    if (!f.blocks.empty()) {
      void* p = f.blocks.back();
      f.blocks.pop_back();
      return p;
    }
  }
  return ::operator new(size);
}

void ncclComm::operator delete(void* p) {
  auto& f = ddpscope::testnccl::free_handles();
  std::lock_guard<std::mutex> lock(f.mu);
  f.blocks.push_back(p);
}
