#include "injector/runtime/identity.h"

#include <unistd.h>

#include <cstdlib>

#include "injector/runtime/comm_registry.h"

namespace ddpscope::inject {
namespace {

// The first variable that holds a non-negative integer.
bool first_int(std::initializer_list<const char*> names, int* value, std::string* source) {
  for (const char* n : names) {
    const char* v = std::getenv(n);
    if (!v || !*v) continue;
    char* end = nullptr;
    long x = std::strtol(v, &end, 10);
    if (*end == '\0' && x >= 0 && x < (1L << 30)) {
      *value = int(x);
      if (source) *source = n;
      return true;
    }
  }
  return false;
}

}  // namespace

Identity identity_from_env() {
  Identity id;
  first_int(
      {"DDPSCOPE_RANK", "RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"},
      &id.rank, &id.rank_source);
  first_int({"WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"}, &id.world_size,
            nullptr);
  first_int({"LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"},
            &id.local_rank, nullptr);
  return id;
}

Identity resolve_identity(Identity id) {
  int rank = -1, size = 0, device = -1;
  Backend backend = Backend::unknown;
  bool have_comm = comm_registry().first_comm(&rank, &size, &device, &backend);
  if (id.rank < 0 && have_comm && rank >= 0) {
    id.rank = rank;
    id.rank_source = "comm";
  }
  if (id.world_size <= 0 && have_comm) id.world_size = size;
  if (id.rank < 0) {
    id.rank = int(getpid());
    id.rank_source = "pid";
  }
  return id;
}

}  // namespace ddpscope::inject
