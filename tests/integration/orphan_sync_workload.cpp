// A program that reaches cudaDeviceSynchronize with no libcudart loaded (it
// asks the process for the symbol, as a plugin would), so under the injector
// it finds only the hook: the hook must fail the call as the runtime would and
// say so once, never crash. Prints the return codes of two calls.
#include <dlfcn.h>

#include <cstdio>

int main() {
  using Fn = int (*)();
  auto sync = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, "cudaDeviceSynchronize"));
  if (!sync) {
    printf("no cudaDeviceSynchronize\n");
    return 0;
  }
  int first = sync();
  int second = sync();
  printf("cudaDeviceSynchronize %d %d\n", first, second);
  return 0;
}
