// Communicators: the per-rank handle NCCL hands out, the state its ranks share, and the
// ncclUniqueId rendezvous that joins rank-threads into one communicator.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <utility>
#include <vector>

#include "injector/nccl/nccl_abi.h"

namespace ddpscope::testnccl {

struct Op;
struct Rendezvous;

// Which operation a contribution belongs to: (-1, -1, seq) for the seq-th collective of a
// communicator, (sender, receiver, seq) for the seq-th message between two ranks.
using OpKey = std::tuple<int, int, uint64_t>;

// State shared by every rank of one communicator; every field is guarded by `mu`.
struct CommShared {
  explicit CommShared(int n);
  const int nranks;
  // Never the same twice in a process, unlike this object's address, which a
  // later communicator may take once this one is gone (profiler_host.cpp's
  // commHash stands on it).
  const uint64_t serial;
  std::mutex mu;
  std::condition_variable cv;  // signalled when an op completes or the communicator aborts
  bool aborted = false;
  std::vector<uint64_t> coll_seq;                              // next collective, per rank
  std::map<std::pair<int, int>, uint64_t> send_seq, recv_seq;  // next message, per pair
  std::map<OpKey, std::shared_ptr<Op>> pending;                // ops missing contributions
};

inline constexpr uint64_t kCommMagic = 0x6464707363636c43ull;  // "ddpsccl" + 'C'

}  // namespace ddpscope::testnccl

// The handle behind ncclComm_t: one per rank. rank/nranks/device are fixed at creation so
// queries work even before a deferred (in-group) rendezvous has completed.
struct ncclComm {
  // Handles are recycled (comm.cpp): a new communicator may sit at a destroyed one's address.
  static void* operator new(size_t size);
  static void operator delete(void* p);

  uint64_t magic = ddpscope::testnccl::kCommMagic;
  int rank = 0;
  int nranks = 1;
  int device = 0;
  // Set once the rendezvous completes, by whichever rank completes it.
  std::shared_ptr<ddpscope::testnccl::CommShared> shared;
  // A deferred init that failed, or ncclInProgress while a non-blocking split
  // that returned this handle has not completed.
  std::atomic<ncclResult_t> async_error{ncclSuccess};
  bool finalized = false;
  // NCCL's profiler plugin, when one is loaded (profiler_host.h): this rank's
  // context, the events it asked for, NCCL's per-function seqNumber (kernel
  // collectives only) and its copy-engine sequence (bumped per CE sync).
  void* profiler_ctx = nullptr;
  int profiler_mask = 0;
  uint64_t profiler_seq[16] = {};
  uint32_t profiler_ce_seq = 0;
};

namespace ddpscope::testnccl {

// Non-null and carrying our magic (catches garbage and already-destroyed handles cheaply).
bool is_comm(const ncclComm* c);

// A fresh communicator whose rank i runs on devices[i]; ready to use.
std::vector<ncclComm*> make_comm_group(const std::vector<int>& devices);

// A handle that joins its communicator through join_rendezvous.
ncclComm* new_unjoined_comm(int nranks, int rank);

// Frees a handle. Aborting also wakes every rank blocked on the communicator and makes
// its pending and future operations fail with ncclRemoteError.
void destroy_comm(ncclComm* c, bool abort);

// Fills id with bytes no other call (in any process) produced: magic, pid, counter, time.
void make_unique_id(ncclUniqueId* id);

// One rank's arrival at an InitRank rendezvous. Registering and waiting are separate so
// that ncclGroupEnd can register several ranks from one thread before waiting for any.
struct Join {
  std::shared_ptr<Rendezvous> rv;
  ncclResult_t error = ncclSuccess;
};
Join join_rendezvous(ncclComm* c, const ncclUniqueId& id);
ncclResult_t wait_rendezvous(const Join& join);
// Withdraws a joined arrival whose communicator is still incomplete, so that the handle
// can be freed; false when there was nothing to withdraw (it completed, or was refused).
bool leave_rendezvous(ncclComm* c, const ncclUniqueId& id);

}  // namespace ddpscope::testnccl
