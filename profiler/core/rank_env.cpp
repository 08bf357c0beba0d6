#include "profiler/core/rank_env.h"

#include <unistd.h>

#include <cstdlib>

namespace ddpscope::rank_env {

std::optional<Found> first_int(std::initializer_list<const char*> names) {
  for (const char* n : names) {
    const char* v = std::getenv(n);
    if (!v || !*v) continue;
    char* end = nullptr;
    long x = std::strtol(v, &end, 10);
    if (*end == '\0' && x >= 0 && x < (1L << 30)) return Found{int(x), n};
  }
  return std::nullopt;
}

int rank_or(int fallback) {
  auto f = first_int(kRank);
  return f ? f->value : fallback;
}

int world_size_or(int fallback) {
  auto f = first_int(kWorldSize);
  return f ? f->value : fallback;
}

bool under_launcher() {
  // Any launcher's count, not only the first found: torchrun under srun
  // leaves both, and either says "several ranks".
  for (const char* n : kWorldSize)
    if (auto f = first_int({n}); f && f->value > 1) return true;
  return false;
}

std::string host_name() {
  char h[256] = {};
  gethostname(h, sizeof h - 1);
  return h;
}

}  // namespace ddpscope::rank_env
