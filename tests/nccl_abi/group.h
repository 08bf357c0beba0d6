// ncclGroupStart/ncclGroupEnd: per-thread nesting depth and the calls deferred until the
// outermost ncclGroupEnd.
#pragma once

#include "comm.h"
#include "op.h"

namespace ddpscope::testnccl {

// Runs req now, or queues it when this thread is inside a group. With
// `wait` false, outside a group, it only registers req (a non-blocking call):
// the last rank to arrive runs it.
ncclResult_t submit(const Request& req, bool wait = true);

// Joins c's InitRank rendezvous now (blocking), or at the outermost ncclGroupEnd.
ncclResult_t submit_init(ncclComm* c, const ncclUniqueId& id);

// Remembers an invalid call made inside a group: like NCCL, the whole group then fails
// at ncclGroupEnd without running any of its calls.
void note_group_error(ncclResult_t error);

// True inside ncclGroupStart/End on this thread.
bool in_group();

ncclResult_t group_start();
ncclResult_t group_end();
// ncclGroupSimulateEnd with a simInfo: ends the group like group_end, but at
// the outermost level only communicator inits run; the operations are
// estimated into *estimated_us, never run. A simInfo NCCL refuses (`valid`
// false) fails the outermost group with ncclInvalidArgument, running nothing.
ncclResult_t group_simulate_end(bool valid, float* estimated_us);

}  // namespace ddpscope::testnccl
