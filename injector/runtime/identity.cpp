#include "injector/runtime/identity.h"

#include <unistd.h>

#include "injector/runtime/comm_registry.h"
#include "profiler/core/rank_env.h"

namespace ddpscope::inject {

Identity identity_from_env() {
  Identity id;
  // DDPSCOPE_RANK overrides the launcher's (docs: injector environment).
  auto rank = rank_env::first_int({"DDPSCOPE_RANK"});
  if (!rank) rank = rank_env::first_int(rank_env::kRank);
  if (rank) id.rank = rank->value, id.rank_source = rank->variable;
  if (auto size = rank_env::first_int(rank_env::kWorldSize)) id.world_size = size->value;
  if (auto local = rank_env::first_int(rank_env::kLocalRank)) id.local_rank = local->value;
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

bool is_helper_of_parent(const Identity& resolved, bool forked_before_start, int parent_rank) {
  if (!forked_before_start) return false;
  if (resolved.rank_source == "pid") return true;
  return resolved.rank_source != "comm" && resolved.rank == parent_rank;
}

}  // namespace ddpscope::inject
