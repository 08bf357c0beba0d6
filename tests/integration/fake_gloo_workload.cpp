// Calls the fake Gloo's allreduce through its PLT with options whose first
// word is argv[1]: "data" (a pointer to floats, readable but no gloo object)
// or "wild" (an address nothing is mapped at). Prints the result.
#include <cstdio>
#include <cstring>
#include <vector>

#include "tests/integration/fake_gloo.h"

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  std::vector<float> x = {1.5f, 2.0f, 3.25f, 4.0f};
  gloo::AllreduceOptions opts;
  opts.data = x.data();
  opts.elements = x.size();
  opts.first =
      strcmp(argv[1], "wild") == 0 ? 0x7ffffff0dead000ull : reinterpret_cast<uint64_t>(x.data());
  for (auto& f : opts.filler) f = 0x100000001ull;
  for (int call = 0; call < 3; ++call) {
    gloo::allreduce(opts);
    printf("call %d: %g\n", call, x[0]);
  }
  return 0;
}
