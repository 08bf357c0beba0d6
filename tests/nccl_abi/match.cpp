// Matching contributions into operations; see op.h.
#include <mutex>

#include "job_memory.h"
#include "op.h"

namespace ddpscope::testnccl {
namespace {

// Contributions that disagree fail the operation for every rank (ncclInvalidUsage)
// instead of corrupting memory or leaving the ranks waiting.
bool compatible(const Request& a, const Request& b) {
  if (is_p2p(a.kind)) {
    return a.count * element_size(a.dtype) == b.count * element_size(b.dtype);
  }
  if (a.kind != b.kind) return false;
  if (a.kind == Kind::kSplit) return true;
  if (a.count != b.count || a.dtype != b.dtype) return false;
  if (reduces(a.kind) && a.op != b.op) return false;
  if (rooted(a.kind) && a.root != b.root) return false;
  return true;
}

}  // namespace

Ticket issue(const Request& req) {
  ncclComm* c = req.comm;
  std::shared_ptr<CommShared> shared = c->shared;
  if (!shared) return {nullptr, nullptr, ncclInvalidUsage};  // its init never completed
  std::shared_ptr<Op> op;
  {
    std::lock_guard<std::mutex> lock(shared->mu);
    if (shared->aborted) return {nullptr, nullptr, ncclRemoteError};
    OpKey key;
    int slot;
    int expected;
    if (req.kind == Kind::kSend) {
      key = {c->rank, req.root, shared->send_seq[{c->rank, req.root}]++};
      slot = 0;
      expected = 2;
    } else if (req.kind == Kind::kRecv) {
      key = {req.root, c->rank, shared->recv_seq[{req.root, c->rank}]++};
      slot = 1;
      expected = 2;
    } else {
      key = {-1, -1, shared->coll_seq[c->rank]++};
      slot = c->rank;
      expected = shared->nranks;
    }
    auto& entry = shared->pending[key];
    if (!entry) {
      entry = std::make_shared<Op>();
      entry->first = req;
      entry->parts.resize(expected);
    }
    op = entry;
    if (!compatible(op->first, req)) op->result = ncclInvalidUsage;
    op->parts[slot] = req;
    if (++op->arrived < expected) return {shared, op};
    shared->pending.erase(key);
  }
  // Last contribution: every other rank's buffers stay valid because their callers are
  // blocked (or inside a group) until this operation is marked done.
  ncclResult_t result = op->result;
  if (result == ncclSuccess) {
    JobMemoryScope job_memory;
    result = execute(*op);
  }
  if (result != ncclSuccess && op->first.kind == Kind::kSplit)  // non-blocking splits fail too
    for (const Request& p : op->parts)
      if (p.placeholder) p.placeholder->async_error.store(result, std::memory_order_release);
  {
    std::lock_guard<std::mutex> lock(shared->mu);
    op->result = result;
    op->done = true;
  }
  shared->cv.notify_all();
  return {shared, op};
}

ncclResult_t wait(const Ticket& ticket) {
  if (ticket.error != ncclSuccess) return ticket.error;
  std::unique_lock<std::mutex> lock(ticket.shared->mu);
  ticket.shared->cv.wait(lock, [&] { return ticket.op->done || ticket.shared->aborted; });
  return ticket.op->done ? ticket.op->result : ncclRemoteError;
}

}  // namespace ddpscope::testnccl
