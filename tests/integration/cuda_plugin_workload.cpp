// Loads cuda_sync_plugin (path in argv[1]) with RTLD_LOCAL, the way Python
// loads torch and torch pulls in libcudart, and runs its CUDA waits; prints
// what each returned.
#include <dlfcn.h>

#include <cstdio>

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  void* plugin = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!plugin) {
    fprintf(stderr, "%s\n", dlerror());
    return 1;
  }
  auto run = reinterpret_cast<void (*)(int*)>(dlsym(plugin, "run_cuda_waits"));
  if (!run) return 1;
  int rc[4];
  run(rc);
  printf("cudaStreamSynchronize %d\ncudaDeviceSynchronize %d\n", rc[0], rc[1]);
  printf("cudaEventSynchronize %d\ncudaStreamWaitEvent %d\n", rc[2], rc[3]);
  return 0;
}
