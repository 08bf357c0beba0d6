// Who this process is in the job: rank, world size and local rank, from the
// launcher's variables (DDPSCOPE_RANK, then torchrun's RANK, Open MPI's
// OMPI_COMM_WORLD_RANK, PMI_RANK, Slurm's SLURM_PROCID), else from the first
// communicator the job created, else the process id.
#pragma once

#include <string>

namespace ddpscope::inject {

struct Identity {
  int rank = -1;
  int world_size = 0;
  int local_rank = -1;
  std::string rank_source;  // the variable name, "comm" or "pid"
};

// From the environment alone; rank stays -1 when no variable names it.
Identity identity_from_env();

// Completes `id` at the moment the rank file is opened.
Identity resolve_identity(Identity id);

// A process forked before its parent started recording (fork_origin() in
// capture.h) is a rank of its own only if it found a rank its parent did not
// have: one its launcher variable names anew (a fork-based launcher sets RANK
// in each child) or its own communicator's. One that only inherited its
// parent's rank, or has none (rank = pid), is its parent's helper (a
// DataLoader worker) and is not recorded: its file would pose as a rank.
bool is_helper_of_parent(const Identity& resolved, bool forked_before_start, int parent_rank);

}  // namespace ddpscope::inject
