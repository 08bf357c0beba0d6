// Writes the generated GPU-like run (gpu_run.h) for tests outside C++:
// `make_gpu_run DIR` leaves DIR/run.db and prints what was generated as one
// JSON object: {"path", "iterations", "kernels": [per rank], "comm_kernels"}.
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "tests/reports/gpu_run.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: make_gpu_run DIR\n");
    return 2;
  }
  std::filesystem::create_directories(argv[1]);
  auto run = ddpscope::testing::make_gpu_run(argv[1]);
  nlohmann::json j = {{"path", run.path},
                      {"iterations", run.iterations},
                      {"kernels", run.kernels},
                      {"comm_kernels", run.comm_kernels}};
  printf("%s\n", j.dump().c_str());
  return 0;
}
