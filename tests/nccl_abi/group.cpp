#include "group.h"

#include <utility>
#include <vector>

#include "profiler_host.h"

namespace ddpscope::testnccl {
namespace {

// A deferred call: an InitRank join (comm != nullptr) or an operation.
struct Deferred {
  ncclComm* init_comm = nullptr;
  ncclUniqueId id{};
  Request req;
};

struct GroupState {
  int depth = 0;
  ncclResult_t error = ncclSuccess;
  std::vector<Deferred> calls;
};

thread_local GroupState g_group;

ncclResult_t first_error(ncclResult_t so_far, ncclResult_t next) {
  return so_far != ncclSuccess ? so_far : next;
}

// Issues every deferred call, then waits: all of this thread's contributions are
// registered before it blocks, so one thread can drive every rank of a communicator and
// a ring of sends and receives cannot deadlock.
ncclResult_t run_group(const std::vector<Deferred>& calls, bool simulate) {
  // Communicators first: a group may init a communicator and then use it.
  std::vector<Join> joins;
  ncclResult_t result = ncclSuccess;
  for (const Deferred& d : calls) {
    if (!d.init_comm) continue;
    joins.push_back(join_rendezvous(d.init_comm, d.id));
    result = first_error(result, joins.back().error);
  }
  // A rank that could not join would leave the others waiting forever: fail instead.
  if (result == ncclSuccess) {
    for (const Join& j : joins) result = first_error(result, wait_rendezvous(j));
  }
  if (result != ncclSuccess) {
    size_t k = 0;
    for (const Deferred& d : calls) {
      if (!d.init_comm) continue;
      const Join& j = joins[k++];
      // Withdrawn arrivals let the application destroy their handles safely. One whose
      // communicator completed anyway (its peers were on other threads) stays usable.
      if (j.error == ncclSuccess && !leave_rendezvous(d.init_comm, d.id)) {
        wait_rendezvous(j);
      } else {
        d.init_comm->async_error = result;
      }
    }
    return result;
  }
  if (simulate) return ncclSuccess;  // NCCL launches nothing of a simulated group
  std::vector<Request> reqs;
  for (const Deferred& d : calls) {
    if (!d.init_comm) reqs.push_back(d.req);
  }
  const std::vector<ProfiledLaunch> launches = profiler_launch(reqs);
  std::vector<Ticket> tickets;
  for (const Request& r : reqs) tickets.push_back(issue(r));
  for (const Ticket& t : tickets) result = first_error(result, wait(t));
  profiler_complete(launches);
  return result;
}

}  // namespace

ncclResult_t submit(const Request& req, bool wait_for_it) {
  if (g_group.depth == 0 && !wait_for_it) return issue(req).error;  // a non-blocking split
  if (g_group.depth == 0) {
    const std::vector<ProfiledLaunch> launches = profiler_launch({req});
    const ncclResult_t result = wait(issue(req));
    profiler_complete(launches);
    return result;
  }
  g_group.calls.push_back({nullptr, {}, req});
  return ncclSuccess;
}

ncclResult_t submit_init(ncclComm* c, const ncclUniqueId& id) {
  if (g_group.depth == 0) return wait_rendezvous(join_rendezvous(c, id));
  g_group.calls.push_back({c, id, {}});
  return ncclSuccess;
}

void note_group_error(ncclResult_t error) {
  if (g_group.depth > 0) g_group.error = first_error(g_group.error, error);
}

bool in_group() { return g_group.depth > 0; }

ncclResult_t group_start() {
  ++g_group.depth;
  return ncclSuccess;
}

namespace {

ncclResult_t end_group(bool simulate, float* estimated_us) {
  if (g_group.depth == 0) return ncclInvalidUsage;
  if (--g_group.depth > 0) return ncclSuccess;
  const std::vector<Deferred> calls = std::move(g_group.calls);
  ncclResult_t error = g_group.error;
  g_group.calls.clear();
  g_group.error = ncclSuccess;
  if (error == ncclSuccess && simulate && !estimated_us) error = ncclInvalidArgument;
  if (error == ncclSuccess && simulate) {
    size_t ops = 0;
    for (const Deferred& d : calls) ops += d.init_comm == nullptr;
    *estimated_us = 5.0f * float(ops);  // a nominal 5 us per operation
  }
  if (error == ncclSuccess) return run_group(calls, simulate);
  for (const Deferred& d : calls) {
    if (d.init_comm) d.init_comm->async_error = error;
  }
  return error;
}

}  // namespace

ncclResult_t group_end() { return end_group(false, nullptr); }

ncclResult_t group_simulate_end(bool valid, float* estimated_us) {
  return end_group(true, valid ? estimated_us : nullptr);
}

}  // namespace ddpscope::testnccl
