// Writes the renderer tests' sample run (fixtures.h: make_run_db) for tests
// outside C++: `make_sample_run DIR [EXTRA]` leaves DIR/run.db.
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "tests/reports/fixtures.h"

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    fprintf(stderr, "usage: make_sample_run DIR [EXTRA]\n");
    return 2;
  }
  std::filesystem::create_directories(argv[1]);
  auto run = ddpscope::testing::make_run_db(argv[1], argc == 3 ? atoi(argv[2]) : 0);
  printf("%s\n", run.path.c_str());
  return 0;
}
