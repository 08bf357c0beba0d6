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

}  // namespace ddpscope::inject
