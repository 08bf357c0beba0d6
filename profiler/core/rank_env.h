// Who a process is in a data-parallel job, from the variables its launcher
// set: torchrun (RANK, WORLD_SIZE, LOCAL_RANK), Open MPI (OMPI_COMM_WORLD_*),
// PMI/PMIx (MPICH, Intel MPI, Slurm's PMI) and Slurm (SLURM_*). The one list
// of these names: the injector names the rank files with it, the tuner's
// workers find their rank with it, and the launcher sets torchrun's.
#pragma once

#include <initializer_list>
#include <optional>
#include <string>

namespace ddpscope::rank_env {

// In the order they are tried: the first that holds an integer wins.
inline constexpr std::initializer_list<const char*> kRank = {
    "RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"};
inline constexpr std::initializer_list<const char*> kWorldSize = {
    "WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"};
inline constexpr std::initializer_list<const char*> kLocalRank = {
    "LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"};

// What torchrun sets for each rank; `ddpscope record --nproc` and the tuner's
// own launch set the same (rank_launcher.h).
inline constexpr const char* kTorchrunRank = "RANK";
inline constexpr const char* kTorchrunLocalRank = "LOCAL_RANK";
inline constexpr const char* kTorchrunGroupRank = "GROUP_RANK";
inline constexpr const char* kTorchrunWorldSize = "WORLD_SIZE";
inline constexpr const char* kTorchrunLocalWorldSize = "LOCAL_WORLD_SIZE";

// A variable's value and its name.
struct Found {
  int value = 0;
  std::string variable;
};

// The first of `names` that holds a whole non-negative integer (below 2^30);
// a variable set to anything else is skipped, as if unset.
std::optional<Found> first_int(std::initializer_list<const char*> names);

int rank_or(int fallback);
int world_size_or(int fallback);

// True when a launcher (mpirun, srun, torchrun) started this process as one
// of several ranks.
bool under_launcher();

// This machine's name (gethostname): the host a rank file records, and the one
// a dead writer's file is told local by (its pid means something only here).
std::string host_name();

}  // namespace ddpscope::rank_env
