// Loads hidden_nccl_plugin (path in argv[1]) RTLD_LOCAL, as Python loads a
// framework extension, runs its all-reduce and prints every rank's result.
#include <dlfcn.h>

#include <cstdio>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  void* plugin = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!plugin) {
    fprintf(stderr, "%s\n", dlerror());
    return 1;
  }
  auto run = reinterpret_cast<int (*)(int, int, float*)>(dlsym(plugin, "run_allreduce"));
  if (!run) return 1;
  constexpr int kRanks = 3, kCount = 5;
  std::vector<float> results(kRanks * kCount, -1.0f);
  int rc = run(kRanks, kCount, results.data());
  printf("rc %d\n", rc);
  for (int r = 0; r < kRanks; ++r) {
    printf("rank %d:", r);
    for (int i = 0; i < kCount; ++i) printf(" %g", results[r * kCount + i]);
    printf("\n");
  }
  return rc == 0 ? 0 : 3;
}
