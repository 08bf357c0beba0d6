// Prints the real nccl.h headers the build checked injector/nccl/nccl_abi.h
// against (the checks themselves are static_asserts in check_abi.cpp: had one
// failed, this program would not exist). Arguments: the labels CMake found a
// header for; each must have been checked, so a header found is never skipped.
#include <algorithm>
#include <cstdio>
#include <string>

#include "tests/nccl_abi/real_header/checked.h"

int main(int argc, char** argv) {
  auto& all = ddpscope::nccl_abi_check::checked_headers();
  std::sort(all.begin(), all.end(), [](auto& a, auto& b) { return a.label < b.label; });
  if (all.empty()) std::printf("no real nccl.h found: nothing checked\n");
  for (const auto& h : all)
    std::printf("checked nccl.h %d.%d.%d (code %d, %s): %s\n", h.major, h.minor, h.patch,
                h.version_code, h.label.c_str(), h.path.c_str());
  int missing = 0;
  for (int i = 1; i < argc; ++i) {
    std::string want = argv[i];
    if (std::none_of(all.begin(), all.end(), [&](auto& h) { return h.label == want; })) {
      std::fprintf(stderr, "nccl.h found as %s was not checked\n", argv[i]);
      ++missing;
    }
  }
  if (std::size_t(argc - 1) != all.size()) {
    std::fprintf(stderr, "%d headers expected, %zu checked\n", argc - 1, all.size());
    return 1;
  }
  return missing ? 1 : 0;
}
